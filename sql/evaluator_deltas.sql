-- evaluator_deltas — view over results/evaluator_deltas.parquet written by `evalframe compare` (with evaluator_scores) (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (declared columns).
-- grain:   config × pair × case × evaluator path
-- inputs:  results/evaluator_deltas.parquet
-- columns: config_id, baseline_run_id, candidate_run_id, case_id, path, baseline_score,
--          candidate_score, score_delta, status
set variable evalframe_evaluator_deltas_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_deltas.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_deltas.parquet'
        end
);

create or replace view evaluator_deltas as
select *
from query(
    if(
        getvariable('evalframe_evaluator_deltas_file') is null,
        'select
                null::varchar as config_id,
                null::varchar as baseline_run_id,
                null::varchar as candidate_run_id,
                null::varchar as case_id,
                null::varchar as path,
                null::double as baseline_score,
                null::double as candidate_score,
                null::double as score_delta,
                null::varchar as status
            where false',
        'select * from read_parquet(getvariable(''evalframe_evaluator_deltas_file''), hive_partitioning = false)'
    )
);
