-- latency_regressed(baseline_latency, candidate_latency, limit_value) — scalar macro: a
-- pair regressed on latency — the relative increase of latency_mean exceeds the limit
-- (rules/compare.py); false when the baseline's latency is not positive.
-- grain:   one value
-- inputs:  baseline_latency, candidate_latency (latency_mean), limit_value (a fraction)
-- returns: boolean, never null
create or replace macro latency_regressed(baseline_latency, candidate_latency, limit_value) as
    coalesce(
        exceeds(
            case
                when baseline_latency > 0
                    then (candidate_latency - baseline_latency) / baseline_latency
            end,
            limit_value
        ),
        false
    );
