-- run_ability — view over results/run_ability.parquet written by `evalframe trend` or `flaky` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × series × run
-- inputs:  results/run_ability.parquet
-- columns: config_id, series_column, series, run_id, cases, ability,
--          ability_se, flag
set variable evalframe_run_ability_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/run_ability.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/run_ability.parquet'
        end
);

create or replace view run_ability as
select *
from query(
    if(
        getvariable('evalframe_run_ability_file') is null,
        'select null::varchar as config_id, null::varchar as series_column, null::varchar as series, null::varchar as run_id, null::bigint as cases, null::double as ability, null::double as ability_se, null::varchar as flag where false',
        'select * from read_parquet(getvariable(''evalframe_run_ability_file''), hive_partitioning = false)'
    )
);
