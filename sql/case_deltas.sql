-- case_deltas — view over results/case_deltas.parquet written by `evalframe compare` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (same columns as case_deltas_at()).
-- grain:   config × pair × case
-- inputs:  results/case_deltas.parquet
-- columns: config_id, baseline_run_id, candidate_run_id, case_id, baseline_/candidate_ score,
--          passed, pass_rate, latency_mean, score_delta, status
set variable evalframe_case_deltas_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/case_deltas.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/case_deltas.parquet'
        end
);

create or replace view case_deltas as
select *
from query(
    if(
        getvariable('evalframe_case_deltas_file') is null,
        'select * from case_deltas_at() where false',
        'select * from read_parquet(getvariable(''evalframe_case_deltas_file''), hive_partitioning = false)'
    )
);
