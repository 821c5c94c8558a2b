-- evaluator_deltas_of(...) — table macro: evaluator_deltas of a flat config
-- from the per-execution leaf scores of execution_partials (keep_leaf_scores := true): per
-- pair, case and evaluator, each side's mean normalized score over the case's attempts
-- (null scores left out) and the status rule without pass flips (docs/compare.md).
-- grain:   config × pair × case × evaluator path (the leaves; a flat tree has no other
--          node but the root, which is left out)
-- inputs:  partials_source (execution_partials with keep_leaf_scores), executions,
--          evaluator_policy, pairs_source
-- params:  partials_source ['partials'], pairs_source ['compare_pairs'],
--          case_delta [0.05], configured [null = evaluator_policy has rows],
--          config_name ['sql'], on_missing ['skip'] ('zero': a missing leaf scores 0)
-- columns: config_id, baseline_run_id, candidate_run_id, case_id, path, baseline_score,
--          candidate_score, score_delta, status ('new', 'removed', 'error', 'regression',
--          'improvement', 'unchanged'); ordered by config_id, pair, case_id, path
create or replace macro evaluator_deltas_of(
    partials_source := 'partials',
    pairs_source := 'compare_pairs',
    case_delta := 0.05,
    configured := null,
    config_name := 'sql',
    on_missing := 'skip'
) as table
with settings as (
    select
        cast(case_delta as double) as cfg_case_delta,
        coalesce(
            cast(configured as boolean), exists (select 1 from evaluator_policy)
        ) as cfg_configured,
        cast(config_name as varchar) as cfg_config_id,
        cast(on_missing as varchar) = 'zero' as cfg_zero_fill
),
distinct_pairs as (
    select min(pair_index) as pair_index, baseline_run_id, candidate_run_id
    from query_table(pairs_source)
    group by baseline_run_id, candidate_run_id
),
paired_runs as (
    select baseline_run_id as run_id from distinct_pairs
    union
    select candidate_run_id from distinct_pairs
),
paired_partials as (
    select p.*
    from query_table(partials_source) as p
    semi join paired_runs as r on r.run_id = p.run_id
    where p.case_id is not null
),
-- expected leaves: the policy's, else every evaluator with rows in the run
run_leaves as (
    select r.run_id, p.evaluator
    from paired_runs as r
    cross join evaluator_policy as p
    where (select cfg_configured from settings)
    union all
    select distinct run_id, evaluator
    from (select run_id, unnest(leaf_scores, recursive := true) from paired_partials)
    where not (select cfg_configured from settings)
),
-- ok executions with leaf rows: one row per expected leaf (a missing leaf: null score,
-- or 0 under on_missing = 'zero')
leaf_values as (
    select
        p.run_id,
        p.case_id,
        x.evaluator as path,
        case when (select cfg_zero_fill from settings) then coalesce(v.s, 0.0) else v.s end as s
    from paired_partials as p
    inner join executions as e using (run_id, case_id, attempt)
    inner join run_leaves as x on x.run_id = p.run_id
    left join (
        select run_id, case_id, attempt, unnest(leaf_scores, recursive := true)
        from paired_partials
    ) as v
        on v.run_id = p.run_id
        and v.case_id = p.case_id
        and v.attempt = p.attempt
        and v.evaluator = x.evaluator
    where e.status = 'ok' and p.n_rows > 0
),
case_values as (
    select run_id, case_id, path, avg(s) as score
    from leaf_values
    group by run_id, case_id, path
),
sides as (
    select
        p.pair_index,
        v.case_id,
        v.path,
        bool_or(v.run_id = p.baseline_run_id) as in_baseline,
        bool_or(v.run_id = p.candidate_run_id) as in_candidate,
        max(v.score) filter (where v.run_id = p.baseline_run_id) as baseline_score,
        max(v.score) filter (where v.run_id = p.candidate_run_id) as candidate_score
    from distinct_pairs as p
    inner join case_values as v
        on v.run_id = p.baseline_run_id or v.run_id = p.candidate_run_id
    group by p.pair_index, v.case_id, v.path
)
select
    st.cfg_config_id as config_id,
    p.baseline_run_id,
    p.candidate_run_id,
    s.case_id,
    s.path,
    s.baseline_score,
    s.candidate_score,
    s.candidate_score - s.baseline_score as score_delta,
    case_status(
        s.in_baseline,
        s.in_candidate,
        s.baseline_score is not null,
        s.candidate_score is not null,
        null,
        null,
        s.candidate_score - s.baseline_score,
        st.cfg_case_delta
    ) as status
from sides as s
inner join distinct_pairs as p using (pair_index)
cross join settings as st
order by config_id, p.pair_index, s.case_id, s.path;
