-- execution_scores_at(...) — table macro: execution_scores of a flat config, straight from
-- the input tables (SPEC §3, docs/scoring.md); the SQL twin of `evalframe score`.
-- grain:   execution (run × case × attempt), one config
-- inputs:  scores, executions, outcomes, evaluator_policy (empty = every evaluator in the
--          data, weight from the data or 1, expected evaluators per run)
-- params:  threshold [0.8], threshold_override [null] (CLI --threshold), borderline [0.6]
--          (null = no band), aggregator ['weighted_average'] (also minimum, maximum,
--          all_or_nothing, safety_gate, threshold), required_children [[]] (root
--          safety_gate), on_missing ['skip'|'zero'|'fail'], outcomes_mode
--          ['gate'|'ignore'|'both'], configured [null = evaluator_policy has rows],
--          config_name ['sql'] (the value of config_id)
-- columns: run_id, case_id, attempt, config_id, status, threshold, score, verdict, passed,
--          required_failed, judge_error, n_missing, n_ignored, outcomes_total,
--          outcomes_passed, latency_ms, cost_usd, input_tokens, output_tokens, tags, then
--          the extra columns of executions
create or replace macro execution_scores_at(
    threshold := 0.8,
    threshold_override := null,
    borderline := 0.6,
    aggregator := 'weighted_average',
    required_children := []::varchar[],
    on_missing := 'skip',
    outcomes_mode := 'gate',
    configured := null,
    config_name := 'sql'
) as table
with settings as (
    select
        cast(threshold as double) as cfg_threshold,
        cast(threshold_override as double) as cfg_override,
        cast(borderline as double) as cfg_borderline,
        cast(aggregator as varchar) as cfg_aggregator,
        cast(required_children as varchar[]) as cfg_required_children,
        len(cast(required_children as varchar[])) > 0 as cfg_has_required_children,
        cast(on_missing as varchar) as cfg_on_missing,
        cast(outcomes_mode as varchar) as cfg_outcomes,
        coalesce(
            cast(configured as boolean), exists (select 1 from evaluator_policy)
        ) as cfg_configured,
        cast(config_name as varchar) as cfg_config_id
),
execution_thresholds as (
    select
        e.run_id,
        e.case_id,
        e.attempt,
        e.status,
        coalesce(st.cfg_override, e.threshold, st.cfg_threshold) as exec_threshold
    from executions as e
    cross join settings as st
),
-- score rows of ok executions; is_leaf: the row's evaluator is a leaf of the config
ok_score_rows as (
    select
        s.run_id,
        s.case_id,
        s.attempt,
        s.evaluator,
        normalize_score(s.score, s.scale_max) as s_norm,
        s.weight as data_weight,
        not st.cfg_configured or s.evaluator in (select p.evaluator from evaluator_policy as p)
            as is_leaf
    from scores as s
    inner join execution_thresholds as e using (run_id, case_id, attempt)
    cross join settings as st
    where e.status = 'ok'
),
row_counts as (
    select
        run_id,
        case_id,
        attempt,
        count(*) filter (where is_leaf) as n_rows,
        count(*) filter (where not is_leaf) as n_ignored
    from ok_score_rows
    group by run_id, case_id, attempt
),
-- expected leaves: every policy row (configured), else the evaluators of the run's rows
expected_leaves as (
    select
        r.run_id,
        p.evaluator,
        p.weight as policy_weight,
        coalesce(p.required, false) as required,
        p.min_score
    from (select distinct run_id from executions) as r
    cross join evaluator_policy as p
    where (select cfg_configured from settings)
    union all
    select distinct
        run_id,
        evaluator,
        null::double as policy_weight,
        false as required,
        null::double as min_score
    from scores
    where not (select cfg_configured from settings)
),
expected_counts as (
    select run_id, count(*) as n_expected
    from expected_leaves
    group by run_id
),
leaf_values as (
    select
        e.run_id,
        e.case_id,
        e.attempt,
        e.exec_threshold,
        x.evaluator,
        r.s_norm,
        coalesce(x.policy_weight, r.data_weight, 1.0) as w,
        x.required,
        list_contains(st.cfg_required_children, x.evaluator) as in_required_children,
        r.s_norm is not null
            and meets(r.s_norm, coalesce(x.min_score, e.exec_threshold)) as passes,
        case
            when r.s_norm is not null then r.s_norm
            when st.cfg_on_missing = 'zero' then 0.0
        end as s,
        r.s_norm is not null or st.cfg_on_missing = 'zero' as present
    from execution_thresholds as e
    inner join row_counts as c using (run_id, case_id, attempt)
    inner join expected_leaves as x on x.run_id = e.run_id
    left join ok_score_rows as r
        on r.run_id = e.run_id
        and r.case_id = e.case_id
        and r.attempt = e.attempt
        and r.evaluator = x.evaluator
    cross join settings as st
    where e.status = 'ok' and c.n_rows > 0
),
root_stats as (
    select
        run_id,
        case_id,
        attempt,
        any_value(exec_threshold) as t,
        count(*) filter (where s_norm is null) as n_missing,
        count(*) filter (where present) as n_present,
        coalesce(sum(w * s) filter (where present), 0.0) as sum_ws,
        coalesce(sum(w) filter (where present), 0.0) as sum_w,
        min(s) as s_min,
        max(s) as s_max,
        count(*) filter (where passes) as n_pass,
        coalesce(bool_or(required and not passes), false) as required_gate,
        coalesce(bool_or(in_required_children and not passes), false) as safety_failed,
        count(*) filter (where present and not in_required_children) as n_present_rest,
        coalesce(sum(w * s) filter (where present and not in_required_children), 0.0)
            as sum_ws_rest,
        coalesce(sum(w) filter (where present and not in_required_children), 0.0)
            as sum_w_rest
    from leaf_values
    group by run_id, case_id, attempt
),
root_values as (
    select
        rs.run_id,
        rs.case_id,
        rs.attempt,
        rs.n_missing,
        rs.n_present > 0 as root_present,
        st.cfg_has_required_children and rs.safety_failed as safety_gate_fired,
        rs.required_gate,
        case when rs.sum_w > 0 then rs.sum_ws / rs.sum_w else 0.0 end as wavg,
        case
            when rs.n_present_rest = 0 then null
            when rs.sum_w_rest > 0 then rs.sum_ws_rest / rs.sum_w_rest
            else 0.0
        end as wavg_rest,
        rs.s_min,
        rs.s_max,
        rs.t,
        rs.n_pass::double / nullif(rs.n_present, 0) as pass_ratio
    from root_stats as rs
    cross join settings as st
),
root_scores as (
    select
        rv.run_id,
        rv.case_id,
        rv.attempt,
        rv.n_missing,
        rv.root_present,
        case
            when not rv.root_present then null
            when rv.required_gate then 0.0
            when st.cfg_aggregator = 'minimum' then rv.s_min
            when st.cfg_aggregator = 'maximum' then rv.s_max
            when st.cfg_aggregator = 'all_or_nothing'
                then case when meets(rv.s_min, rv.t) then rv.wavg else 0.0 end
            when st.cfg_aggregator = 'safety_gate'
                then case
                    when rv.safety_gate_fired then 0.0
                    else coalesce(rv.wavg_rest, rv.wavg)
                end
            when st.cfg_aggregator = 'threshold' then rv.pass_ratio
            else rv.wavg
        end as root_score,
        rv.root_present
            and (rv.required_gate or (st.cfg_aggregator = 'safety_gate' and rv.safety_gate_fired))
            as gate_fired
    from root_values as rv
    cross join settings as st
),
outcome_counts as (
    select
        run_id,
        case_id,
        attempt,
        count(*) as outcomes_total,
        count(*) filter (where passed) as outcomes_passed
    from outcomes
    group by run_id, case_id, attempt
),
execution_flags as (
    select
        e.run_id,
        e.case_id,
        e.attempt,
        e.status,
        st.*,
        et.exec_threshold,
        coalesce(c.n_rows, 0) > 0 as has_rows,
        coalesce(c.n_ignored, 0) as rows_ignored,
        case
            when coalesce(c.n_rows, 0) > 0 then r.n_missing
            else coalesce(x.n_expected, 0)
        end as leaves_missing,
        r.root_present,
        r.root_score,
        r.gate_fired,
        coalesce(o.outcomes_total, 0) as n_outcomes,
        coalesce(o.outcomes_passed, 0) as n_outcomes_passed,
        e.status = 'ok' as is_ok,
        coalesce(
            e.status = 'ok'
            and coalesce(c.n_rows, 0) > 0
            and st.cfg_on_missing = 'fail'
            and r.n_missing > 0,
            false
        ) as is_judge_error
    from executions as e
    inner join execution_thresholds as et using (run_id, case_id, attempt)
    left join row_counts as c using (run_id, case_id, attempt)
    left join root_scores as r using (run_id, case_id, attempt)
    left join outcome_counts as o using (run_id, case_id, attempt)
    left join expected_counts as x on x.run_id = e.run_id
    cross join settings as st
),
execution_states as (
    select
        *,
        is_ok and not is_judge_error and not (has_rows and coalesce(root_present, false))
            as is_unscored
    from execution_flags
),
execution_scores as (
    select
        *,
        is_ok and has_rows and coalesce(gate_fired, false) as is_required_failed,
        case
            when not is_ok or is_unscored then null
            when is_judge_error then 0.0
            else root_score
        end as final_score
    from execution_states
),
execution_verdicts as (
    select
        *,
        case
            when not is_ok then 'error'
            when is_judge_error then 'fail'
            when is_unscored then 'unscored'
            when is_required_failed then 'fail'
            else verdict_band(final_score, exec_threshold, cfg_borderline)
        end as final_verdict
    from execution_scores
)
select
    v.run_id,
    v.case_id,
    v.attempt,
    v.cfg_config_id as config_id,
    v.status,
    v.exec_threshold as threshold,
    v.final_score as score,
    v.final_verdict as verdict,
    case
        when not v.is_ok or v.is_judge_error then false
        when v.cfg_outcomes = 'gate' then
            case
                when v.n_outcomes > 0 then v.n_outcomes_passed = v.n_outcomes
                else v.final_verdict = 'pass'
            end
        when v.cfg_outcomes = 'ignore' then v.final_verdict = 'pass'
        else v.final_verdict = 'pass' and (v.n_outcomes = 0 or v.n_outcomes_passed = v.n_outcomes)
    end as passed,
    v.is_required_failed as required_failed,
    v.is_judge_error as judge_error,
    case when v.is_ok then coalesce(v.leaves_missing, 0) else 0 end::bigint as n_missing,
    case when v.is_ok then v.rows_ignored else 0 end::bigint as n_ignored,
    v.n_outcomes::bigint as outcomes_total,
    v.n_outcomes_passed::bigint as outcomes_passed,
    x.latency_ms,
    x.cost_usd,
    x.input_tokens,
    x.output_tokens,
    x.tags,
    x.* exclude (
        run_id, case_id, attempt, status, threshold, latency_ms, cost_usd, input_tokens,
        output_tokens, tags
    )
from execution_verdicts as v
inner join executions as x using (run_id, case_id, attempt)
order by v.run_id, v.case_id, v.attempt;
