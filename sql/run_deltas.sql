-- run_deltas — view over results/run_deltas.parquet written by `evalframe compare` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (same columns as run_deltas_at()).
-- grain:   config × pair
-- inputs:  results/run_deltas.parquet
-- columns: config_id, baseline_run_id, candidate_run_id, run-level sides and deltas, status
--          counts, paired statistics, mcnemar_p, reasons, regression_detected
set variable evalframe_run_deltas_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/run_deltas.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/run_deltas.parquet'
        end
);

create or replace view run_deltas as
select *
from query(
    if(
        getvariable('evalframe_run_deltas_file') is null,
        'select * from run_deltas_at() where false',
        'select * from read_parquet(getvariable(''evalframe_run_deltas_file''), hive_partitioning = false)'
    )
);
