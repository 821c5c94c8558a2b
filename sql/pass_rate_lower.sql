-- pass_rate_lower(pass_rate, pass_rate_se, cases) — scalar macro: the lower end of the 95 %
-- Wilson interval of a run's pass rate over its effective sample size (effective_n), what
-- the gate run_gates.min_pass_rate_lower compares (rules/run_gates.py).
-- grain:   one value
-- inputs:  a run_summary row's pass_rate, pass_rate_se and cases
-- returns: double in [0, 1]; null when the run has no pass rate or no case
create or replace macro pass_rate_lower(pass_rate, pass_rate_se, cases) as
    list_transform(
        [wilson_interval(
            pass_rate * effective_n(pass_rate, pass_rate_se, cases),
            effective_n(pass_rate, pass_rate_se, cases)
        ).low],
        lambda low: case when low < 0 then 0.0 else low end
    )[1];
