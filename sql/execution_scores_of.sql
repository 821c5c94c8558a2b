-- execution_scores_of(partials_source, ...) — table macro: execution_scores of a flat
-- config from the per-execution partial sums of execution_partials
-- (docs/scoring.md): every rule runs on per-execution rows, no judge row is read here.
-- grain:   execution (run × case × attempt), one config; rows unordered
-- inputs:  partials_source (shaped like execution_partials, computed with the same
--          configured / required_children / keep_threshold_scores), executions, outcomes,
--          evaluator_policy
-- params:  partials_source ['partials'], threshold [0.8], threshold_override
--          [null], borderline [0.6] (null = no band), aggregator ['weighted_average'] (also
--          minimum, maximum, all_or_nothing, safety_gate, threshold), required_children
--          [[]], on_missing ['skip'|'zero'|'fail'], outcomes_mode ['gate'|'ignore'|'both'],
--          configured [null = evaluator_policy has rows], config_name ['sql']
-- columns: run_id, case_id, attempt, config_id, status, threshold, score, verdict, passed,
--          required_failed, judge_error, n_missing, n_ignored, outcomes_total,
--          outcomes_passed, latency_ms, cost_usd, input_tokens, output_tokens, tags, then
--          the extra columns of executions
create or replace macro execution_scores_of(
    partials_source := 'partials',
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
        cast(on_missing as varchar) as cfg_on_missing,
        cast(outcomes_mode as varchar) as cfg_outcomes,
        coalesce(
            cast(configured as boolean), exists (select 1 from evaluator_policy)
        ) as cfg_configured,
        cast(config_name as varchar) as cfg_config_id,
        cast(required_children as varchar[]) as cfg_rc
),
-- the config's leaves, summed once
policy_totals as (
    select
        count(*)::bigint as n_policy,
        coalesce(sum(coalesce(p.weight, 1.0)), 0.0) as total_cw,
        count(*) filter (where p.required)::bigint as n_required,
        count(*) filter (where list_contains(st.cfg_rc, p.evaluator))::bigint as n_rc,
        coalesce(
            sum(coalesce(p.weight, 1.0)) filter (where not list_contains(st.cfg_rc, p.evaluator)),
            0.0
        ) as total_cw_rest,
        -- the same in fixed point (execution_partials: sws_q ...), null when a configured
        -- weight is outside [2^-24, 2^24): absent leaves are then summed as floats
        case
            when coalesce(bool_and(cw_exact), true)
                then coalesce(sum(cw_q), 0)
        end as total_cw_q,
        case
            when coalesce(bool_and(cw_exact), true)
                then coalesce(
                    sum(cw_q) filter (where not list_contains(st.cfg_rc, p.evaluator)), 0
                )
        end as total_cw_rest_q
    from (
        select
            *,
            case when cw_exact then try_cast(floor(cw * pow(2.0, 80)) as hugeint) end as cw_q
        from (
            select
                *,
                coalesce(weight, 1.0) as cw,
                cw = 0 or (cw >= pow(2.0, -24) and cw < pow(2.0, 24)) as cw_exact
            from evaluator_policy
        )
    ) as p
    cross join settings as st
),
known_partials as (
    select * from query_table(partials_source)
    where run_id is not null and case_id is not null
),
-- expected leaves per run: the policy's (configured), else the run's data evaluators
run_expected as (
    select run_id, bit_count(bit_or(mask))::bigint as n_expected_data
    from known_partials
    group by run_id
),
outcome_counts as (
    select
        run_id,
        case_id,
        attempt,
        count(*)::bigint as outcomes_total,
        count(*) filter (where passed)::bigint as outcomes_passed
    from outcomes
    group by run_id, case_id, attempt
),
execution_rows as (
    select
        e.run_id,
        e.case_id,
        e.attempt,
        e.status,
        e.status = 'ok' as is_ok,
        coalesce(st.cfg_override, e.threshold, st.cfg_threshold) as t,
        coalesce(p.n_rows, 0) > 0 as has_rows,
        coalesce(p.n_ignored, 0) as n_ignored,
        case
            when st.cfg_configured then pt.n_policy
            else coalesce(x.n_expected_data, 0)
        end as n_expected,
        p.* exclude (run_id, case_id, attempt, n_ignored),
        coalesce(o.outcomes_total, 0) as n_outcomes,
        coalesce(o.outcomes_passed, 0) as n_outcomes_passed,
        -- the executions columns the output keeps, carried from this one join (renamed:
        -- no clash with the partials' columns); evalframe_x_evalframe_end marks the end
        e.latency_ms as evalframe_k_latency_ms,
        e.cost_usd as evalframe_k_cost_usd,
        e.input_tokens as evalframe_k_input_tokens,
        e.output_tokens as evalframe_k_output_tokens,
        e.tags as evalframe_k_tags,
        columns(
            e.* exclude (
                run_id, case_id, attempt, status, threshold, latency_ms, cost_usd, input_tokens,
                output_tokens, tags
            )
        ) as 'evalframe_x_\0',
        null as evalframe_x_evalframe_end
    from executions as e
    cross join settings as st
    cross join policy_totals as pt
    left join known_partials as p
        on p.run_id = e.run_id and p.case_id = e.case_id and p.attempt = e.attempt
    left join run_expected as x on x.run_id = e.run_id
    left join outcome_counts as o
        on o.run_id = e.run_id and o.case_id = e.case_id and o.attempt = e.attempt
),
-- the leaves each execution has no row for, and their weight
leaf_counts as (
    select
        r.*,
        r.n_expected - coalesce(r.n_rows, 0) as n_absent,
        case
            when st.cfg_configured then pt.total_cw - coalesce(r.cw_rows, 0.0)
            else (r.n_expected - coalesce(r.n_rows, 0))::double
        end as w_absent,
        (r.n_expected - pt.n_rc) - coalesce(r.n_rows_rest, 0) as n_absent_rest,
        case
            when st.cfg_configured then pt.total_cw_rest - coalesce(r.cw_rows_rest, 0.0)
            else ((r.n_expected - pt.n_rc) - coalesce(r.n_rows_rest, 0))::double
        end as w_absent_rest,
        case
            when st.cfg_configured then pt.total_cw_q - coalesce(r.cw_rows_q, 0)
            else (r.n_expected - coalesce(r.n_rows, 0))::hugeint * (1::hugeint << 80)
        end as w_absent_q,
        case
            when st.cfg_configured then pt.total_cw_rest_q - coalesce(r.cw_rows_rest_q, 0)
            else ((r.n_expected - pt.n_rc) - coalesce(r.n_rows_rest, 0))::hugeint
                * (1::hugeint << 80)
        end as w_absent_rest_q
    from execution_rows as r
    cross join settings as st
    cross join policy_totals as pt
),
-- on_missing = 'zero': a missing leaf counts as present with score 0
root_stats as (
    select
        c.*,
        coalesce(c.n_null, 0) + c.n_absent as n_missing,
        st.cfg_on_missing = 'zero' as zero_fill,
        case
            when st.cfg_on_missing = 'zero'
                then coalesce(c.n_present, 0) + coalesce(c.n_null, 0) + c.n_absent
            else coalesce(c.n_present, 0)
        end as n_present_all,
        case
            when st.cfg_on_missing = 'zero'
                then coalesce(c.sw, 0.0) + coalesce(c.w_null, 0.0) + c.w_absent
            else coalesce(c.sw, 0.0)
        end as sw_all,
        case
            when st.cfg_on_missing = 'zero'
                then coalesce(c.n_present_rest, 0) + coalesce(c.n_null_rest, 0) + c.n_absent_rest
            else coalesce(c.n_present_rest, 0)
        end as n_present_rest_all,
        case
            when st.cfg_on_missing = 'zero'
                then coalesce(c.sw_rest, 0.0) + coalesce(c.w_null_rest, 0.0) + c.w_absent_rest
            else coalesce(c.sw_rest, 0.0)
        end as sw_rest_all,
        -- the fixed-point sums (exact, order-independent) when every row that enters them
        -- has a weight in band; a configured weight out of band makes on_missing = 'zero'
        -- executions use the float sums (w_absent_q is null)
        case
            when st.cfg_on_missing = 'zero'
                then coalesce(c.sw_q, 0) + coalesce(c.w_null_q, 0) + c.w_absent_q
            else coalesce(c.sw_q, 0)
        end as sw_all_q,
        case
            when len(st.cfg_rc) = 0 then null  -- the rest is every leaf: sw_all_q
            when st.cfg_on_missing = 'zero'
                then coalesce(c.sw_rest_q, 0) + coalesce(c.w_null_rest_q, 0) + c.w_absent_rest_q
            else coalesce(c.sw_rest_q, 0)
        end as sw_rest_only_q,
        case when len(st.cfg_rc) = 0 then c.sws_q else c.sws_rest_q end as sws_rest_all_q,
        coalesce(c.n_out, 0)
        + case when st.cfg_on_missing = 'zero' then coalesce(c.n_out_null, 0) else 0 end = 0
        and (st.cfg_on_missing <> 'zero' or c.w_absent_q is not null) as exact,
        pt.n_required > 0 and (
            c.req_ms_fail > 0
            or c.req_t_null > 0
            or c.req_rows < pt.n_required
            or coalesce(not meets(c.req_t_min, c.t), false)
        ) as required_gate,
        len(st.cfg_rc) > 0 and pt.n_rc > 0 and (
            c.rc_ms_fail > 0
            or c.rc_t_null > 0
            or c.rc_rows < pt.n_rc
            or coalesce(not meets(c.rc_t_min, c.t), false)
        ) as safety_gate_fired
    from leaf_counts as c
    cross join settings as st
    cross join policy_totals as pt
),
root_values as (
    select
        r.*,
        case
            when r.exact and r.sw_all_q > 0
                then (coalesce(r.sws_q, 0)::double * pow(2.0, -80))
                / (r.sw_all_q::double * pow(2.0, -80))
            when r.exact then 0.0
            when r.sw_all > 0 then coalesce(r.sws, 0.0) / r.sw_all
            else 0.0
        end as wavg,
        case
            when r.n_present_rest_all = 0 then null
            when r.exact and coalesce(r.sw_rest_only_q, r.sw_all_q) > 0
                then (coalesce(r.sws_rest_all_q, 0)::double * pow(2.0, -80))
                / (coalesce(r.sw_rest_only_q, r.sw_all_q)::double * pow(2.0, -80))
            when r.exact then 0.0
            when r.sw_rest_all > 0 then coalesce(r.sws_rest, 0.0) / r.sw_rest_all
            else 0.0
        end as wavg_rest,
        case when r.zero_fill and r.n_missing > 0 then 0.0 else r.s_min end as s_min_all,
        case
            when r.zero_fill and r.n_missing > 0 then greatest(r.s_max, 0.0)
            else r.s_max
        end as s_max_all,
        (
            coalesce(r.n_pass_ms, 0)
            + coalesce(len(list_filter(r.t_scores, lambda v: meets(v, r.t))), 0)
        )::double / nullif(r.n_present_all, 0) as pass_ratio,
        r.has_rows and r.n_present_all > 0 as root_present
    from root_stats as r
),
root_scores as (
    select
        rv.*,
        node_score(
            rv.root_present,
            rv.required_gate,
            st.cfg_aggregator,
            rv.wavg,
            rv.s_min_all,
            rv.s_max_all,
            rv.t,
            rv.pass_ratio,
            rv.safety_gate_fired,
            rv.wavg_rest
        ) as root_score,
        node_gate_fired(
            rv.root_present, st.cfg_aggregator, rv.required_gate, rv.safety_gate_fired
        ) as gate_fired,
        execution_judge_error(rv.is_ok, rv.has_rows, st.cfg_on_missing, rv.n_missing)
            as is_judge_error
    from root_values as rv
    cross join settings as st
),
execution_states as (
    select
        *,
        execution_unscored(is_ok, is_judge_error, has_rows, root_present) as is_unscored,
        execution_required_failed(is_ok, has_rows, gate_fired) as is_required_failed
    from root_scores
),
execution_finals as (
    select
        *,
        execution_score(is_ok, is_unscored, is_judge_error, root_score) as final_score
    from execution_states
),
execution_verdicts as (
    select
        f.*,
        execution_verdict(
            f.is_ok,
            f.is_judge_error,
            f.is_unscored,
            f.is_required_failed,
            f.final_score,
            f.t,
            st.cfg_borderline
        ) as final_verdict
    from execution_finals as f
    cross join settings as st
)
select * exclude (evalframe_end) from (
    select
        v.run_id,
        v.case_id,
        v.attempt,
        st.cfg_config_id as config_id,
        v.status,
        v.t as threshold,
        v.final_score as score,
        v.final_verdict as verdict,
        execution_passed(
            v.is_ok,
            v.is_judge_error,
            v.final_verdict,
            v.n_outcomes,
            v.n_outcomes_passed,
            st.cfg_outcomes
        ) as passed,
        v.is_required_failed as required_failed,
        v.is_judge_error as judge_error,
        case
            when not v.is_ok then 0
            when v.has_rows then v.n_missing
            else v.n_expected
        end::bigint as n_missing,
        case when v.is_ok then v.n_ignored else 0 end::bigint as n_ignored,
        v.n_outcomes::bigint as outcomes_total,
        v.n_outcomes_passed::bigint as outcomes_passed,
        v.evalframe_k_latency_ms as latency_ms,
        v.evalframe_k_cost_usd as cost_usd,
        v.evalframe_k_input_tokens as input_tokens,
        v.evalframe_k_output_tokens as output_tokens,
        v.evalframe_k_tags as tags,
        columns('^evalframe_x_(.*)$') as '\1'
    from execution_verdicts as v
    cross join settings as st
);
