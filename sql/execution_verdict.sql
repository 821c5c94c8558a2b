-- execution_verdict(is_ok, is_judge_error, is_unscored, is_required_failed, score,
--                   threshold, borderline) — scalar macro: the first verdict that applies:
-- 'error', 'fail' (judge error), 'unscored', 'fail' (required gate), then the band of the
-- score (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, is_judge_error, is_unscored, is_required_failed (booleans); score,
--          threshold, borderline (0–1; borderline null = no band)
-- returns: varchar 'error' | 'fail' | 'unscored' | 'pass' | 'borderline'
create or replace macro execution_verdict(
    is_ok,
    is_judge_error,
    is_unscored,
    is_required_failed,
    score,
    threshold,
    borderline
) as
    case
        when not is_ok then 'error'
        when is_judge_error then 'fail'
        when is_unscored then 'unscored'
        when is_required_failed then 'fail'
        else coalesce(verdict_band(score, threshold, borderline), 'fail')
    end;
