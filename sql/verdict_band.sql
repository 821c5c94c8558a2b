-- verdict_band(score, threshold, borderline) — scalar macro: the verdict band of a score
-- (rules/verdicts.py).
-- grain:   one value
-- inputs:  score (0–1, may be null), threshold (pass boundary), borderline (lower edge of
--          the borderline band; null = no band)
-- returns: varchar 'pass' | 'borderline' | 'fail'; null when score is null.
--          (execution_verdict adds 'error', 'unscored' and the required/judge-error fails.)
create or replace macro verdict_band(score, threshold, borderline := null) as
    case
        when score is null then null
        when meets(score, threshold) then 'pass'
        when borderline is not null and meets(score, borderline) then 'borderline'
        else 'fail'
    end;
