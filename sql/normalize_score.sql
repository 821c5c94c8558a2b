-- normalize_score(score, scale_max) — scalar macro: a raw judge score on the 0–1 scale.
-- grain:   one value
-- inputs:  score (raw judge score, may be null), scale_max (top of the raw scale; null = 1.0)
-- returns: double, score / scale_max; null when score is null
create or replace macro normalize_score(score, scale_max) as
    cast(score as double) / coalesce(cast(scale_max as double), 1.0);
