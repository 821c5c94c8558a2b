-- runs — view over the dataset's run metadata (created by init.sql; run duckdb from
-- inside the dataset folder). Without the table: no rows.
-- grain:   run
-- inputs:  runs.parquet or runs/**/*.parquet
-- columns: run_id, created_at (timestamp), label, config (JSON snapshot), then metadata
set variable evalframe_runs_files = (
    select
        case
            when exists (select 1 from glob('runs.parquet')) then 'runs.parquet'
            when exists (select 1 from glob('runs/**/*.parquet')) then 'runs/**/*.parquet'
        end
);

create or replace view runs as
with declared_columns as (
    select
        null::varchar as run_id,
        null::timestamp as created_at,
        null::varchar as label,
        null::varchar as config
    where false
),
file_rows as (
    select * from declared_columns
    union all by name
    select *
    from query(
        if(
            getvariable('evalframe_runs_files') is null,
            'select * from declared_columns',
            'select * from read_parquet(getvariable(''evalframe_runs_files''), '
            || 'hive_partitioning = true, union_by_name = true)'
        )
    )
)
select * replace (try_cast(created_at as timestamp) as created_at)
from file_rows;
