-- run_summary — view over results/run_summary.parquet written by `evalframe score` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (same columns as run_summary_at()).
-- grain:   config × run
-- inputs:  results/run_summary.parquet
-- columns: config_id, run_id, executions, cases, passed, failed, errored, unscored, n_pass,
--          n_borderline, n_fail, pass_rate, mean_score, case_pass_rate, pass_rate_se,
--          mean_score_se, latency_*, cost_usd, tokens, gates, run metadata
set variable evalframe_run_summary_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/run_summary.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/run_summary.parquet'
        end
);

create or replace view run_summary as
select *
from query(
    if(
        getvariable('evalframe_run_summary_file') is null,
        'select * from run_summary_at() where false',
        'select * from read_parquet(getvariable(''evalframe_run_summary_file''), hive_partitioning = false)'
    )
);
