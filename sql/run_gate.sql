-- run_gate(value, minimum) — scalar macro: a run gate holds when value meets minimum; a
-- run without a value (null) fails it (rules/run_gates.py).
-- grain:   one value
-- inputs:  value (a run's mean_score or pass_rate), minimum (the gate)
-- returns: boolean, never null
create or replace macro run_gate(value, minimum) as
    coalesce(meets(value, minimum), false);
