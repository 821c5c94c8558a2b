-- latency_regressed(baseline_latency, candidate_latency, limit_value) — scalar macro: a
-- pair regressed on latency — the relative increase of latency_mean exceeds the limit
-- (rules/compare.py); false when the baseline's latency is not positive.
-- grain:   one value
-- inputs:  baseline_latency, candidate_latency (latency_mean), limit_value (a fraction)
-- returns: boolean, never null
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro latency_regressed(baseline_latency, candidate_latency, limit_value) as
    coalesce(((case when (baseline_latency > 0) then ((candidate_latency - baseline_latency) / baseline_latency) else null end) > (limit_value + cast(1e-09 as double))), false);
