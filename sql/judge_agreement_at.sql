-- judge_agreement_at(threshold, source) — table macro: each judge against the human labels
-- at one threshold for every evaluator, a what-if on judge_agreement: the judge passes an
-- execution when the evaluator's normalized score meets `threshold` (docs/judges.md).
-- Counted over the judged executions of `source` (status ok, verdict not unscored) and the
-- evaluator labels with a label_passed; lower-is-better evaluators per evaluator_policy.
-- grain:   config × run × evaluator × rater
-- inputs:  labels, scores, evaluator_policy; source: a relation shaped like
--          execution_scores
-- params:  threshold [0.8], source ['execution_scores']
-- columns: config_id, run_id, evaluator, rater, threshold, n_labeled, tp, fp, fn, tn,
--          agreement, kappa, sensitivity, specificity
create or replace macro judge_agreement_at(threshold := 0.8, source := 'execution_scores') as table
with judged as (
    select config_id, run_id, case_id, attempt
    from query_table(source)
    where status = 'ok' and verdict <> 'unscored'
),
decisions as (
    select
        j.config_id,
        l.run_id,
        l.evaluator,
        l.rater,
        meets(normalize_score(s.score, s.scale_max, p.higher_is_better), threshold) as judge,
        l.label_passed as label
    from labels as l
    join judged as j
        on j.run_id = l.run_id and j.case_id = l.case_id and j.attempt = l.attempt
    join scores as s
        on s.run_id = l.run_id and s.case_id = l.case_id and s.attempt = l.attempt
        and s.evaluator = l.evaluator
    left join evaluator_policy as p on p.evaluator = l.evaluator
    where l.evaluator is not null and l.label_passed is not null and s.score is not null
),
counts as (
    select
        config_id,
        run_id,
        evaluator,
        rater,
        count(*) as n_labeled,
        count(*) filter (where judge and label) as tp,
        count(*) filter (where judge and not label) as fp,
        count(*) filter (where not judge and label) as fn,
        count(*) filter (where not judge and not label) as tn
    from decisions
    group by config_id, run_id, evaluator, rater
)
select
    config_id,
    run_id,
    evaluator,
    rater,
    cast(threshold as double) as threshold,
    n_labeled,
    tp,
    fp,
    fn,
    tn,
    (tp + tn) / n_labeled::double as agreement,
    -- κ from the counts: (n (tp + tn) − A) / (n² − A), A = (tp + fp)(tp + fn) + (fn + tn)(fp + tn)
    (n_labeled * (tp + tn) - ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)))::double
        / nullif(n_labeled * n_labeled - ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)), 0)
        as kappa,
    tp / nullif(tp + fn, 0)::double as sensitivity,
    tn / nullif(tn + fp, 0)::double as specificity
from counts
order by config_id, run_id, evaluator, rater;
