-- variance_components — view over results/variance_components.parquet written by `evalframe score` (created
-- by init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × run × measure (score, passed)
-- inputs:  results/variance_components.parquet
-- columns: config_id, run_id, measure, cases, values, mean_attempts, var_within,
--          var_between, icc
set variable evalframe_variance_components_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/variance_components.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/variance_components.parquet'
        end
);

create or replace view variance_components as
select *
from query(
    if(
        getvariable('evalframe_variance_components_file') is null,
        'select null::varchar as config_id, null::varchar as run_id, null::varchar as measure, null::bigint as cases, null::bigint as "values", null::double as mean_attempts, null::double as var_within, null::double as var_between, null::double as icc where false',
        'select * from read_parquet(getvariable(''evalframe_variance_components_file''), hive_partitioning = false)'
    )
);
