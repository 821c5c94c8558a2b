-- run_gate(value, minimum) — scalar macro: a run gate holds when value meets minimum; a
-- run without a value (null) fails it (rules/run_gates.py).
-- grain:   one value
-- inputs:  value (a run's mean_score or pass_rate), minimum (the gate)
-- returns: boolean, never null
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro run_gate(value, minimum) as
    coalesce(((cast(value as double) >= (cast(minimum as double) - cast(1e-09 as double))) and (not isnan(cast(value as double)))), false);
