-- execution_unscored(is_ok, is_judge_error, has_rows, root_present) — scalar macro: an ok
-- execution without a judge error whose tree has no score (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, is_judge_error, has_rows, root_present (booleans)
-- returns: boolean
create or replace macro execution_unscored(is_ok, is_judge_error, has_rows, root_present) as
    is_ok and not is_judge_error and not (has_rows and coalesce(root_present, false));
