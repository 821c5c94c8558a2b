-- execution_scores — view over results/execution_scores.parquet written by `evalframe score` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (same columns as execution_scores_at()).
-- grain:   config × execution
-- inputs:  results/execution_scores.parquet
-- columns: run_id, case_id, attempt, config_id, status, threshold, score, verdict, passed,
--          required_failed, judge_error, n_missing, n_ignored, outcomes_total,
--          outcomes_passed, latency_ms, cost_usd, input_tokens, output_tokens, tags, extras
set variable evalframe_execution_scores_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/execution_scores.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/execution_scores.parquet'
        end
);

create or replace view execution_scores as
select *
from query(
    if(
        getvariable('evalframe_execution_scores_file') is null,
        'select * from execution_scores_at() where false',
        'select * from read_parquet(getvariable(''evalframe_execution_scores_file''), hive_partitioning = false)'
    )
);
