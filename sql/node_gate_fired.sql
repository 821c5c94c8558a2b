-- node_gate_fired(present, aggregator, required_failed, safety_gate_fired) — scalar
-- macro: a present node's gate fired — its required gate, or a safety_gate whose required
-- child failed (rules/aggregators.py).
-- grain:   one value
-- inputs:  present, required_failed, safety_gate_fired (booleans); aggregator (varchar)
-- returns: boolean
create or replace macro node_gate_fired(present, aggregator, required_failed, safety_gate_fired) as
    present and (required_failed or (aggregator = 'safety_gate' and safety_gate_fired));
