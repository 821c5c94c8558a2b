-- compare_pairs — table of (baseline, candidate) run pairs compared in one pass by the
-- *_deltas macros when they get no `baseline` / `candidate` arguments.
-- grain:   pair
-- inputs:  none; insert rows, e.g. insert into compare_pairs values (0, 'run-a', 'run-b')
-- columns: pair_index (output order), baseline_run_id, candidate_run_id
create table if not exists compare_pairs (
    pair_index bigint,
    baseline_run_id varchar,
    candidate_run_id varchar
);
