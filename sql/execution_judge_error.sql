-- execution_judge_error(is_ok, has_rows, on_missing, n_missing) — scalar macro: an ok
-- execution with judge rows misses an expected evaluator under on_missing 'fail'
-- (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, has_rows (booleans), on_missing (varchar), n_missing (count)
-- returns: boolean, never null
create or replace macro execution_judge_error(is_ok, has_rows, on_missing, n_missing) as
    coalesce(is_ok and has_rows and on_missing = 'fail' and n_missing > 0, false);
