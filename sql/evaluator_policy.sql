-- evaluator_policy — table of per-evaluator settings of a flat config (empty = no
-- `evaluators` list: every evaluator in the data counts, weight from the data or 1).
-- grain:   evaluator
-- inputs:  none; insert rows to configure, e.g. insert into evaluator_policy values
--          ('safety', 5, true, 0.9, true), ('hallucination', 1, false, 0.7, false)
-- columns: evaluator, weight (null = data weight, else 1), required (a failing or missing
--          required evaluator zeroes the score), min_score (null = the execution threshold;
--          on the normalized, higher-is-better scale), higher_is_better (false: the score
--          is normalized as 1 − score / scale_max, see normalize_score)
create table if not exists evaluator_policy (
    evaluator varchar primary key,
    weight double,
    required boolean not null default false,
    min_score double,
    higher_is_better boolean not null default true
);
