-- evaluator_tests — view over results/evaluator_tests.parquet written by `evalframe compare` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × pair × leaf evaluator
-- inputs:  results/evaluator_tests.parquet
-- columns: config_id, baseline_run_id, candidate_run_id, path, n_cases,
--          mean_delta, d_z, n_nonzero, wilcoxon_z, p_value, p_holm
set variable evalframe_evaluator_tests_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_tests.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_tests.parquet'
        end
);

create or replace view evaluator_tests as
select *
from query(
    if(
        getvariable('evalframe_evaluator_tests_file') is null,
        'select null::varchar as config_id, null::varchar as baseline_run_id, null::varchar as candidate_run_id, null::varchar as path, null::bigint as n_cases, null::double as mean_delta, null::double as d_z, null::bigint as n_nonzero, null::double as wilcoxon_z, null::double as p_value, null::double as p_holm where false',
        'select * from read_parquet(getvariable(''evalframe_evaluator_tests_file''), hive_partitioning = false)'
    )
);
