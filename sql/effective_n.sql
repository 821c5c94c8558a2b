-- effective_n(p, se, cases) — scalar macro: the case-clustered effective sample size of a
-- rate (rules/wilson.py): p (1 − p) / se², at least 1, when se > 0 and 0 < p < 1; else the
-- number of cases.
-- grain:   one value
-- inputs:  p (a run's pass_rate), se (its pass_rate_se), cases (the run's cases)
-- returns: double
create or replace macro effective_n(p, se, cases) as
    case
        when se > 0 and p > 0 and p < 1 then greatest(1.0, p * (1 - p) / (se * se))
        else cast(cases as double)
    end;
