-- verdict_band(score, threshold, borderline) — scalar macro: the verdict band of a score
-- (rules/verdicts.py).
-- grain:   one value
-- inputs:  score (0–1, may be null), threshold (pass boundary), borderline (lower edge of
--          the borderline band; null = no band)
-- returns: varchar 'pass' | 'borderline' | 'fail'; null when score is null.
--          (execution_verdict adds 'error', 'unscored' and the required/judge-error fails.)
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro verdict_band(score, threshold, borderline := null) as
    (case when (score is null) then cast(null as text) else (case when ((score >= (threshold - cast(1e-09 as double))) and (not isnan(score))) then 'pass' else (case when ((not (borderline is null)) and ((score >= (borderline - cast(1e-09 as double))) and (not isnan(score)))) then 'borderline' else 'fail' end) end) end);
