-- decide_latency(baseline_latency, candidate_latency, limit_value) — scalar macro: the
-- latency part of a pair's decision (rules/decide.py): 'fail' when the latency
-- rule regressed (latency_regressed), else 'pass'.
-- grain:   one value
-- inputs:  baseline_latency, candidate_latency (latency_mean), limit_value
--          (compare.max_latency_increase, a fraction)
-- returns: varchar 'pass' | 'fail', never null
create or replace macro decide_latency(baseline_latency, candidate_latency, limit_value) as
    case
        when latency_regressed(baseline_latency, candidate_latency, limit_value) then 'fail'
        else 'pass'
    end;
