-- decide_latency(baseline_latency, candidate_latency, limit_value) — scalar macro: the
-- latency part of a pair's decision (rules/decide.py, SPEC §12): 'fail' when the latency
-- rule of SPEC §6 regressed (latency_regressed), else 'pass'.
-- grain:   one value
-- inputs:  baseline_latency, candidate_latency (latency_mean), limit_value
--          (compare.max_latency_increase, a fraction)
-- returns: varchar 'pass' | 'fail', never null
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro decide_latency(baseline_latency, candidate_latency, limit_value) as
    (case when coalesce(((case when (baseline_latency > 0) then ((candidate_latency - baseline_latency) / baseline_latency) else null end) > (limit_value + cast(1e-09 as double))), false) then 'fail' else 'pass' end);
