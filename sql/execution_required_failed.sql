-- execution_required_failed(is_ok, has_rows, gate_fired) — scalar macro: the required gate
-- of the tree fired for an ok execution with judge rows (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, has_rows, gate_fired (booleans)
-- returns: boolean
create or replace macro execution_required_failed(is_ok, has_rows, gate_fired) as
    is_ok and has_rows and coalesce(gate_fired, false);
