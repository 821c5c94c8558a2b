-- evaluator_policy — table of per-evaluator settings of a flat config (empty = no
-- `evaluators` list: every evaluator in the data counts, weight from the data or 1).
-- grain:   evaluator
-- inputs:  none; insert rows to configure, e.g. insert into evaluator_policy values
--          ('safety', 5, true, 0.9)
-- columns: evaluator, weight (null = data weight, else 1), required (a failing or missing
--          required evaluator zeroes the score), min_score (null = the execution threshold)
create table if not exists evaluator_policy (
    evaluator varchar primary key,
    weight double,
    required boolean not null default false,
    min_score double
);
