-- labels — view over the dataset's human labels (created by init.sql; run duckdb from inside
-- the dataset folder). Without the table: no rows.
-- grain:   run × case × attempt × evaluator × rater
-- inputs:  labels.parquet or labels/**/*.parquet
-- columns: run_id, case_id, attempt (default 0), evaluator (null: the execution's verdict),
--          rater (default 'human'), label_passed, label_score, scale_max, extras
set variable evalframe_labels_files = (
    select
        case
            when exists (select 1 from glob('labels.parquet')) then 'labels.parquet'
            when exists (select 1 from glob('labels/**/*.parquet'))
                then 'labels/**/*.parquet'
        end
);

create or replace view labels as
with declared_columns as (
    select
        null::varchar as run_id,
        null::varchar as case_id,
        null::bigint as attempt,
        null::varchar as evaluator,
        null::varchar as rater,
        null::boolean as label_passed,
        null::double as label_score,
        null::double as scale_max
    where false
),
file_rows as (
    select * from declared_columns
    union all by name
    select *
    from query(
        if(
            getvariable('evalframe_labels_files') is null,
            'select * from declared_columns',
            'select * from read_parquet(getvariable(''evalframe_labels_files''), '
            || 'hive_partitioning = true, union_by_name = true)'
        )
    )
)
select * replace (
    coalesce(attempt, 0)::bigint as attempt, coalesce(rater, 'human')::varchar as rater
)
from file_rows;
