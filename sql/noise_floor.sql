-- noise_floor — view over results/noise_floor.parquet written by `evalframe score` or
-- `compare` with --replicates (created by init.sql from inside the dataset folder;
-- `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × replicate group
-- inputs:  results/noise_floor.parquet
-- columns: config_id, replicate_group, runs, pairs, shared_cases, rms_pass_rate_delta,
--          rms_mean_score_delta, flip_rate
set variable evalframe_noise_floor_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/noise_floor.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/noise_floor.parquet'
        end
);

create or replace view noise_floor as
select *
from query(
    if(
        getvariable('evalframe_noise_floor_file') is null,
        'select null::varchar as config_id, null::varchar as replicate_group, null::bigint as runs, null::bigint as pairs, null::bigint as shared_cases, null::double as rms_pass_rate_delta, null::double as rms_mean_score_delta, null::double as flip_rate where false',
        'select * from read_parquet(getvariable(''evalframe_noise_floor_file''), hive_partitioning = false)'
    )
);
