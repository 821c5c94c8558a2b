-- execution_score(is_ok, is_unscored, is_judge_error, root_score) — scalar macro: the
-- execution's score — null when errored or unscored, 0 on a judge error, else the root
-- score of its tree (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, is_unscored, is_judge_error (booleans), root_score (0–1)
-- returns: double
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro execution_score(is_ok, is_unscored, is_judge_error, root_score) as
    (case when ((not is_ok) or is_unscored) then null else (case when is_judge_error then cast(0.0 as double) else root_score end) end);
