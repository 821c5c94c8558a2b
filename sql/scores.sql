-- scores — view over the dataset's judge output (created by init.sql; run duckdb from
-- inside the dataset folder). `evalframe sql` registers the validated table instead.
-- grain:   run × case × attempt × evaluator
-- inputs:  scores.parquet, or scores/**/*.parquet (hive partitions allowed)
-- columns: run_id, case_id, attempt (default 0), evaluator, score, scale_max (default 1.0),
--          weight, label, reason, then any extra columns of the files
set variable evalframe_scores_files = (
    select
        case
            when exists (select 1 from glob('scores.parquet')) then 'scores.parquet'
            else 'scores/**/*.parquet'
        end
);

create or replace view scores as
with declared_columns as (
    select
        null::varchar as run_id,
        null::varchar as case_id,
        null::bigint as attempt,
        null::varchar as evaluator,
        null::double as score,
        null::double as scale_max,
        null::double as weight,
        null::varchar as label,
        null::varchar as reason
    where false
),
file_rows as (
    select * from declared_columns
    union all by name
    select *
    from read_parquet(
        getvariable('evalframe_scores_files'), hive_partitioning = true, union_by_name = true
    )
)
select * replace (
    coalesce(attempt, 0)::bigint as attempt,
    coalesce(scale_max, 1.0)::double as scale_max
)
from file_rows;
