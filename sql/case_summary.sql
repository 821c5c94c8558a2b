-- case_summary — view over results/case_summary.parquet written by `evalframe score` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (same columns as case_summary_at()).
-- grain:   config × run × case
-- inputs:  results/case_summary.parquet
-- columns: config_id, run_id, case_id, attempts, errored, scored, unscored, score, n_passed,
--          pass_rate, passed, flaky, latency_mean, cost_usd
set variable evalframe_case_summary_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/case_summary.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/case_summary.parquet'
        end
);

create or replace view case_summary as
select *
from query(
    if(
        getvariable('evalframe_case_summary_file') is null,
        'select * from case_summary_at() where false',
        'select * from read_parquet(getvariable(''evalframe_case_summary_file''), hive_partitioning = false)'
    )
);
