-- node_score(present, required_failed, aggregator, wavg, s_min, s_max, threshold,
--            pass_ratio, safety_gate_fired, wavg_rest) — scalar macro: a composite node's
-- score from its children's statistics under its aggregator (rules/aggregators.py).
-- grain:   one value
-- inputs:  present, required_failed, safety_gate_fired (booleans); aggregator (varchar);
--          wavg, s_min, s_max, pass_ratio, wavg_rest (0–1, wavg_rest null when every child
--          is required); threshold (the node's t)
-- returns: double; null when no child is present, 0 when the required gate fired
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro node_score(present, required_failed, aggregator, wavg, s_min, s_max, threshold, pass_ratio, safety_gate_fired, wavg_rest) as
    (case when (not present) then null else (case when required_failed then cast(0.0 as double) else (case when (aggregator = 'minimum') then s_min else (case when (aggregator = 'maximum') then s_max else (case when (aggregator = 'all_or_nothing') then (case when ((s_min >= (threshold - cast(1e-09 as double))) and (not isnan(s_min))) then wavg else cast(0.0 as double) end) else (case when (aggregator = 'safety_gate') then (case when safety_gate_fired then cast(0.0 as double) else coalesce(wavg_rest, wavg) end) else (case when (aggregator = 'threshold') then pass_ratio else wavg end) end) end) end) end) end) end);
