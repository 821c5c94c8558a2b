-- judge_agreement — view over results/judge_agreement.parquet written by `evalframe score` on a dataset with labels (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × run × evaluator × rater
-- inputs:  results/judge_agreement.parquet
-- columns: config_id, run_id, evaluator, rater, n_labeled, tp, fp, fn, tn,
--          agreement, kappa, sensitivity, specificity, score_mae, score_bias,
--          krippendorff_alpha, best_kappa_threshold, sensitivity_low,
--          specificity_low, admitted, recommended_threshold
set variable evalframe_judge_agreement_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/judge_agreement.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/judge_agreement.parquet'
        end
);

create or replace view judge_agreement as
select *
from query(
    if(
        getvariable('evalframe_judge_agreement_file') is null,
        'select null::varchar as config_id, null::varchar as run_id, null::varchar as evaluator, null::varchar as rater, null::bigint as n_labeled, null::bigint as tp, null::bigint as fp, null::bigint as fn, null::bigint as tn, null::double as agreement, null::double as kappa, null::double as sensitivity, null::double as specificity, null::double as score_mae, null::double as score_bias, null::double as krippendorff_alpha, null::double as best_kappa_threshold, null::double as sensitivity_low, null::double as specificity_low, null::boolean as admitted, null::double as recommended_threshold where false',
        'select * from read_parquet(getvariable(''evalframe_judge_agreement_file''), hive_partitioning = false)'
    )
);
