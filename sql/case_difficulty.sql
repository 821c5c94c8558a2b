-- case_difficulty — view over results/case_difficulty.parquet written by `evalframe trend` or `flaky` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × series × case
-- inputs:  results/case_difficulty.parquet
-- columns: config_id, series_column, series, case_id, runs, passes, difficulty,
--          difficulty_se, discrimination, flag
set variable evalframe_case_difficulty_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/case_difficulty.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/case_difficulty.parquet'
        end
);

create or replace view case_difficulty as
select *
from query(
    if(
        getvariable('evalframe_case_difficulty_file') is null,
        'select null::varchar as config_id, null::varchar as series_column, null::varchar as series, null::varchar as case_id, null::bigint as runs, null::bigint as passes, null::double as difficulty, null::double as difficulty_se, null::double as discrimination, null::varchar as flag where false',
        'select * from read_parquet(getvariable(''evalframe_case_difficulty_file''), hive_partitioning = false)'
    )
);
