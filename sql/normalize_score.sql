-- normalize_score(score, scale_max, higher_is_better := true) — scalar macro: a raw judge
-- score on the 0–1, higher-is-better scale (rules/normalize.py).
-- grain:   one value
-- inputs:  score (raw judge score, may be null), scale_max (top of the raw scale; null =
--          1.0), higher_is_better (boolean; false for a lower-is-better metric such as a
--          hallucination rate; null = true)
-- returns: double, score / scale_max, or 1 − score / scale_max when higher_is_better is
--          false; null when score is null
create or replace macro normalize_score(score, scale_max, higher_is_better := true) as
    case
        when coalesce(higher_is_better, true)
            then cast(score as double) / coalesce(cast(scale_max as double), 1.0)
        else 1.0 - cast(score as double) / coalesce(cast(scale_max as double), 1.0)
    end;
