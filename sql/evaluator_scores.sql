-- evaluator_scores — view over results/evaluator_scores.parquet written by `evalframe score --evaluators` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (declared columns).
-- grain:   config × execution × evaluator-tree node
-- inputs:  results/evaluator_scores.parquet
-- columns: run_id, case_id, attempt, config_id, path, evaluator, parent, depth, aggregator,
--          is_leaf, weight, required, min_score, raw_score, scale_max, score, missing,
--          passed, score_label, children_passed, children_present, label, reason
set variable evalframe_evaluator_scores_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_scores.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_scores.parquet'
        end
);

create or replace view evaluator_scores as
select *
from query(
    if(
        getvariable('evalframe_evaluator_scores_file') is null,
        'select
                null::varchar as run_id,
                null::varchar as case_id,
                null::bigint as attempt,
                null::varchar as config_id,
                null::varchar as path,
                null::varchar as evaluator,
                null::varchar as parent,
                null::integer as depth,
                null::varchar as aggregator,
                null::boolean as is_leaf,
                null::double as weight,
                null::boolean as required,
                null::double as min_score,
                null::double as raw_score,
                null::double as scale_max,
                null::double as score,
                null::boolean as missing,
                null::boolean as passed,
                null::varchar as score_label,
                null::bigint as children_passed,
                null::bigint as children_present,
                null::varchar as label,
                null::varchar as reason
            where false',
        'select * from read_parquet(getvariable(''evalframe_evaluator_scores_file''), hive_partitioning = false)'
    )
);
