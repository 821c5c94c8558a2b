-- executions — view over the dataset's executions (created by init.sql; run duckdb from
-- inside the dataset folder). Without the table: the distinct executions of `scores`.
-- grain:   run × case × attempt
-- inputs:  executions.parquet or executions/**/*.parquet; else view scores
-- columns: run_id, case_id, attempt (default 0), status (default 'ok'), threshold,
--          latency_ms, cost_usd, input_tokens, output_tokens, tags, then extra columns
set variable evalframe_executions_files = (
    select
        case
            when exists (select 1 from glob('executions.parquet')) then 'executions.parquet'
            when exists (select 1 from glob('executions/**/*.parquet'))
                then 'executions/**/*.parquet'
        end
);

create or replace view executions as
with declared_columns as (
    select
        null::varchar as run_id,
        null::varchar as case_id,
        null::bigint as attempt,
        null::varchar as status,
        null::double as threshold,
        null::double as latency_ms,
        null::double as cost_usd,
        null::bigint as input_tokens,
        null::bigint as output_tokens,
        null::varchar[] as tags
    where false
),
file_rows as (
    select * from declared_columns
    union all by name
    select *
    from query(
        if(
            getvariable('evalframe_executions_files') is null,
            'select distinct run_id, case_id, attempt from scores',
            'select * from read_parquet(getvariable(''evalframe_executions_files''), '
            || 'hive_partitioning = true, union_by_name = true)'
        )
    )
)
select * replace (
    coalesce(attempt, 0)::bigint as attempt,
    coalesce(status, 'ok') as status
)
from file_rows;
