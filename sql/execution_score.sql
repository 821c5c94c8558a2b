-- execution_score(is_ok, is_unscored, is_judge_error, root_score) — scalar macro: the
-- execution's score — null when errored or unscored, 0 on a judge error, else the root
-- score of its tree (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, is_unscored, is_judge_error (booleans), root_score (0–1)
-- returns: double
create or replace macro execution_score(is_ok, is_unscored, is_judge_error, root_score) as
    case
        when not is_ok or is_unscored then null
        when is_judge_error then 0.0
        else root_score
    end::double;
