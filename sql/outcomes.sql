-- outcomes — view over the dataset's expected-outcome checks (created by init.sql; run
-- duckdb from inside the dataset folder). Without the table: no rows.
-- grain:   run × case × attempt × outcome
-- inputs:  outcomes.parquet or outcomes/**/*.parquet
-- columns: run_id, case_id, attempt (default 0), outcome, passed, justification, extras
set variable evalframe_outcomes_files = (
    select
        case
            when exists (select 1 from glob('outcomes.parquet')) then 'outcomes.parquet'
            when exists (select 1 from glob('outcomes/**/*.parquet'))
                then 'outcomes/**/*.parquet'
        end
);

create or replace view outcomes as
with declared_columns as (
    select
        null::varchar as run_id,
        null::varchar as case_id,
        null::bigint as attempt,
        null::varchar as outcome,
        null::boolean as passed,
        null::varchar as justification
    where false
),
file_rows as (
    select * from declared_columns
    union all by name
    select *
    from query(
        if(
            getvariable('evalframe_outcomes_files') is null,
            'select * from declared_columns',
            'select * from read_parquet(getvariable(''evalframe_outcomes_files''), '
            || 'hive_partitioning = true, union_by_name = true)'
        )
    )
)
select * replace (coalesce(attempt, 0)::bigint as attempt)
from file_rows;
