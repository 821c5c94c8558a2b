-- execution_verdict(is_ok, is_judge_error, is_unscored, is_required_failed, score,
--                   threshold, borderline) — scalar macro: the first verdict that applies:
-- 'error', 'fail' (judge error), 'unscored', 'fail' (required gate), then the band of the
-- score (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, is_judge_error, is_unscored, is_required_failed (booleans); score,
--          threshold, borderline (0–1; borderline null = no band)
-- returns: varchar 'error' | 'fail' | 'unscored' | 'pass' | 'borderline'
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro execution_verdict(is_ok, is_judge_error, is_unscored, is_required_failed, score, threshold, borderline) as
    (case when (not is_ok) then 'error' else (case when is_judge_error then 'fail' else (case when is_unscored then 'unscored' else (case when is_required_failed then 'fail' else (case when ((score >= (threshold - cast(1e-09 as double))) and (not isnan(score))) then 'pass' else (case when ((not (borderline is null)) and ((score >= (borderline - cast(1e-09 as double))) and (not isnan(score)))) then 'borderline' else 'fail' end) end) end) end) end) end);
