-- node_score(present, required_failed, aggregator, wavg, s_min, s_max, threshold,
--            pass_ratio, safety_gate_fired, wavg_rest) — scalar macro: a composite node's
-- score from its children's statistics under its aggregator (rules/aggregators.py).
-- grain:   one value
-- inputs:  present, required_failed, safety_gate_fired (booleans); aggregator (varchar);
--          wavg, s_min, s_max, pass_ratio, wavg_rest (0–1, wavg_rest null when every child
--          is required); threshold (the node's t)
-- returns: double; null when no child is present, 0 when the required gate fired
create or replace macro node_score(
    present,
    required_failed,
    aggregator,
    wavg,
    s_min,
    s_max,
    threshold,
    pass_ratio,
    safety_gate_fired,
    wavg_rest
) as
    case
        when not present then null
        when required_failed then 0.0
        when aggregator = 'minimum' then s_min
        when aggregator = 'maximum' then s_max
        when aggregator = 'all_or_nothing'
            then case when meets(s_min, threshold) then wavg else 0.0 end
        when aggregator = 'safety_gate'
            then case when safety_gate_fired then 0.0 else coalesce(wavg_rest, wavg) end
        when aggregator = 'threshold' then pass_ratio
        else wavg
    end::double;
