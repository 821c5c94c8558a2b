-- agreement_curve — view over results/agreement_curve.parquet written by `evalframe score` on a dataset with labels (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × run × evaluator × rater × threshold
-- inputs:  results/agreement_curve.parquet
-- columns: config_id, run_id, evaluator, rater, threshold, n_labeled, tp, fp,
--          fn, tn, kappa, sensitivity, specificity
set variable evalframe_agreement_curve_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/agreement_curve.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/agreement_curve.parquet'
        end
);

create or replace view agreement_curve as
select *
from query(
    if(
        getvariable('evalframe_agreement_curve_file') is null,
        'select null::varchar as config_id, null::varchar as run_id, null::varchar as evaluator, null::varchar as rater, null::double as threshold, null::bigint as n_labeled, null::bigint as tp, null::bigint as fp, null::bigint as fn, null::bigint as tn, null::double as kappa, null::double as sensitivity, null::double as specificity where false',
        'select * from read_parquet(getvariable(''evalframe_agreement_curve_file''), hive_partitioning = false)'
    )
);
