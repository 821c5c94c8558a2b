-- execution_partials(...) — table macro: the one pass over the judge rows. Groups the rows
-- of `scores` by execution key right after the scan, joined only to the small table of
-- the data's evaluators ⟕ evaluator_policy; every flat rule then runs on these rows
-- (execution_scores_of). The value checks of the input are counted in the same pass.
-- grain:   execution (run × case × attempt) of the score rows; rows with a null run_id or
--          case_id form their own groups (validation reports them)
-- inputs:  scores (typed: attempt and scale_max filled), evaluator_policy (its
--          higher_is_better normalizes a lower-is-better evaluator's scores, normalize_score)
-- params:  configured [null = evaluator_policy has rows], required_children [[]] (the
--          root safety_gate's), clamp [false] (scores clamped into [0, scale_max], NaN/inf
--          become null), keep_threshold_scores [false] (list the scores the `threshold`
--          aggregator compares with each execution's threshold), keep_leaf_scores [false]
--          (list every leaf's score, for evaluator_deltas), on_missing [null] (a value other
--          than 'zero': w_null, cw_rows and their _rest and _q forms are null — only
--          on_missing = 'zero' reads them), any_required [null] (false: no evaluator is
--          required, req_rows / req_ms_fail / req_t_null are 0 and req_t_min null, as they
--          are then anyway, without computing them)
-- columns: run_id, case_id, attempt; n_all, null_eval, n_rows (rows of leaves), n_null,
--          n_ignored, n_present, sws (Σ w·s), sw (Σ w), w_null (weight of null rows),
--          cw_rows (Σ configured weight or 1), s_min, s_max; req_rows, req_ms_fail,
--          req_t_null, req_t_min (required leaves: rows, below min_score, null without
--          min_score, min s without min_score); rc_rows, rc_ms_fail, rc_t_null, rc_t_min
--          (the same for required_children); n_rows_rest, n_null_rest, n_present_rest,
--          sws_rest, sw_rest, w_null_rest, cw_rows_rest (leaves not in required_children);
--          n_pass_ms (present leaves meeting their min_score), t_scores (list), leaf_scores
--          (list of {evaluator, s}), mask (bit per data evaluator, ids < 63 else null),
--          ev_max (largest evaluator id: 63 or more and the masks are incomplete);
--          sws_q, sw_q, w_null_q, cw_rows_q, sws_rest_q, sw_rest_q, w_null_rest_q,
--          cw_rows_rest_q (the same sums in fixed point, the _rest ones only with
--          required_children: Σ floor(x · 2^80) as hugeint over the rows with a weight 0 or
--          in [2^-24, 2^24) and a score null or in [0, 1] — exact, so independent of the row
--          order; docs/architecture.md, "Order-independent sums"), n_out, n_out_null (leaf
--          rows with / without a score outside that band: an execution with one that enters
--          its sums uses the float sums);
--          bad_nan, bad_neg, bad_above, bad_scale, bad_weight, n_clamped, n_nulled
create or replace macro execution_partials(
    configured := null,
    required_children := []::varchar[],
    clamp := false,
    keep_threshold_scores := false,
    keep_leaf_scores := false,
    on_missing := null,
    any_required := null
) as table
with settings as (
    select
        coalesce(
            cast(configured as boolean), exists (select 1 from evaluator_policy)
        ) as cfg_configured,
        cast(required_children as varchar[]) as cfg_rc
),
data_evaluators as (
    select evaluator, (row_number() over (order by evaluator) - 1)::integer as ev
    from (select distinct evaluator from scores where evaluator is not null)
),
-- one row per evaluator in the data: the only table the judge rows are joined to
evaluator_leaves as (
    select
        d.evaluator,
        d.ev,
        not st.cfg_configured or p.evaluator is not null as is_leaf,
        p.weight as policy_weight,
        coalesce(p.weight, 1.0) as cw1,
        st.cfg_configured and coalesce(p.required, false) as is_required,
        p.min_score,
        coalesce(p.higher_is_better, true) as higher_is_better,
        list_contains(st.cfg_rc, d.evaluator) as in_rc,
        case when d.ev < 63 then (1::bigint << d.ev) end as bit,
        -- configured weights in fixed point once per evaluator, not per row (see below)
        coalesce(p.weight, 1.0) = 0
        or (coalesce(p.weight, 1.0) >= pow(2.0, -24) and coalesce(p.weight, 1.0) < pow(2.0, 24))
            as cw1_exact,
        try_cast(floor(coalesce(p.weight, 1.0) * pow(2.0, 80)) as hugeint) as cw1_fixed
    from data_evaluators as d
    left join evaluator_policy as p on p.evaluator = d.evaluator
    cross join settings as st
),
score_rows as (
    select
        s.run_id,
        s.case_id,
        s.attempt,
        s.evaluator,
        s.score is not null and not isfinite(s.score) as is_nan,
        coalesce(isfinite(s.score) and s.score < 0, false) as is_neg,
        coalesce(isfinite(s.score) and s.score > s.scale_max, false) as is_above,
        not coalesce(s.scale_max > 0, false) or not coalesce(isfinite(s.scale_max), false)
            as is_bad_scale,
        coalesce(s.weight < 0 or not isfinite(s.weight), false) as is_bad_weight,
        normalize_score(
            case
                when not coalesce(cast(clamp as boolean), false) then s.score
                when not isfinite(s.score) then null
                else least(greatest(s.score, 0.0), s.scale_max)
            end,
            s.scale_max,
            coalesce(l.higher_is_better, true)
        ) as s,
        coalesce(l.is_leaf, false) as leaf,
        coalesce(l.policy_weight, s.weight, 1.0) as w,
        l.cw1,
        coalesce(l.is_required, false) as req,
        coalesce(l.in_rc, false) as rc,
        l.min_score,
        l.bit,
        l.ev,
        coalesce(l.cw1_exact, false) as cw1_exact,
        l.cw1_fixed,
        -- the row's weight in fixed point when it is the configured one (or the default 1)
        case
            when l.policy_weight is not null then l.cw1_fixed
            when s.weight is null then 1::hugeint << 80
        end as w_fixed
    from scores as s
    left join evaluator_leaves as l on l.evaluator = s.evaluator
    cross join settings as st
),
-- a row summed exactly: weight 0 or in [2^-24, 2^24), score null or in [0, 1]
exact_flags as (
    select
        *,
        coalesce(
            (w = 0 or (w >= pow(2.0, -24) and w < pow(2.0, 24)))
            and (s is null or (s >= 0 and s <= 1)),
            false
        ) as exact
    from score_rows
),
-- its terms in fixed point: floor(x · 2^80), exact; try_cast because DuckDB may fold the
-- band test away on Parquet statistics that leave NaN out (such rows fail validation)
exact_rows as (
    select
        *,
        case when exact and s is not null then try_cast(floor(w * s * pow(2.0, 80)) as hugeint)
        end as ws_q,
        case
            when exact then coalesce(w_fixed, try_cast(floor(w * pow(2.0, 80)) as hugeint))
        end as w_q,
        case when cw1_exact then cw1_fixed end as cw1_q
    from exact_flags
),
grouped as (
    select
        run_id,
        case_id,
        attempt,
        count(*)::bigint as n_all,
        count(*) filter (where evaluator is null)::bigint as null_eval,
        count(*) filter (where leaf)::bigint as n_rows,
        count(*) filter (where leaf and s is null)::bigint as n_null,
        count(*) filter (where not leaf and evaluator is not null)::bigint as n_ignored,
        count(*) filter (where leaf and s is not null)::bigint as n_present,
        sum(w * s) filter (where leaf and s is not null) as sws,
        sum(w) filter (where leaf and s is not null) as sw,
        sum(w) filter (where leaf and s is null) as w_null_x,
        sum(cw1) filter (where leaf) as cw_rows_x,
        sum(ws_q) filter (where leaf and s is not null and exact) as sws_q,
        sum(w_q) filter (where leaf and s is not null and exact) as sw_q,
        sum(w_q) filter (where leaf and s is null and exact) as w_null_q_x,
        sum(cw1_q) filter (where leaf and cw1_exact) as cw_rows_q_x,
        count(*) filter (where leaf and not exact and s is not null)::bigint as n_out,
        count(*) filter (where leaf and not exact and s is null)::bigint as n_out_null,
        min(s) filter (where leaf) as s_min,
        max(s) filter (where leaf) as s_max,
        count(*) filter (where leaf and req)::bigint as req_rows_x,
        count(*) filter (
            where leaf and req and min_score is not null and not coalesce(meets(s, min_score), false)
        )::bigint as req_ms_fail_x,
        count(*) filter (where leaf and req and min_score is null and s is null)::bigint
            as req_t_null_x,
        min(s) filter (where leaf and req and min_score is null) as req_t_min_x,
        count(*) filter (where leaf and rc)::bigint as rc_rows_x,
        count(*) filter (
            where leaf and rc and min_score is not null and not coalesce(meets(s, min_score), false)
        )::bigint as rc_ms_fail_x,
        count(*) filter (where leaf and rc and min_score is null and s is null)::bigint
            as rc_t_null_x,
        min(s) filter (where leaf and rc and min_score is null) as rc_t_min_x,
        count(*) filter (where leaf and not rc)::bigint as n_rows_rest_x,
        count(*) filter (where leaf and not rc and s is null)::bigint as n_null_rest_x,
        count(*) filter (where leaf and not rc and s is not null)::bigint as n_present_rest_x,
        sum(w * s) filter (where leaf and not rc and s is not null) as sws_rest_x,
        sum(w) filter (where leaf and not rc and s is not null) as sw_rest_x,
        sum(w) filter (where leaf and not rc and s is null) as w_null_rest_x,
        sum(cw1) filter (where leaf and not rc) as cw_rows_rest_x,
        sum(ws_q) filter (where leaf and not rc and s is not null and exact) as sws_rest_q_x,
        sum(w_q) filter (where leaf and not rc and s is not null and exact) as sw_rest_q_x,
        sum(w_q) filter (where leaf and not rc and s is null and exact) as w_null_rest_q_x,
        sum(cw1_q) filter (where leaf and not rc and cw1_exact) as cw_rows_rest_q_x,
        count(*) filter (
            where leaf and s is not null and min_score is not null and meets(s, min_score)
        )::bigint as n_pass_ms,
        list(s) filter (
            where leaf and s is not null and min_score is null
        ) as t_scores_x,
        list({'evaluator': evaluator, 's': s}) filter (
            where leaf
        ) as leaf_scores_x,
        bit_or(bit) as mask,
        max(ev) as ev_max,
        count(*) filter (where is_nan)::bigint as bad_nan,
        count(*) filter (where is_neg)::bigint as bad_neg,
        count(*) filter (where is_above)::bigint as bad_above,
        count(*) filter (where is_bad_scale)::bigint as bad_scale,
        count(*) filter (where is_bad_weight)::bigint as bad_weight,
        count(*) filter (where (is_neg or is_above) and not is_nan)::bigint as n_clamped,
        count(*) filter (where is_nan)::bigint as n_nulled
    from exact_rows
    group by run_id, case_id, attempt
)
-- the options are macro parameters here, outside the aggregates: a bound value is a
-- constant, so DuckDB drops the aggregates an option turns off (without
-- required_children the rc_ columns are 0 / null and the _rest columns are the sums
-- above; without keep_* the lists are null; see on_missing and any_required above),
-- instead of computing them per row
select
    run_id,
    case_id,
    attempt,
    n_all,
    null_eval,
    n_rows,
    n_null,
    n_ignored,
    n_present,
    sws,
    sw,
    case when coalesce(cast(on_missing as varchar), 'zero') = 'zero' then w_null_x end
        as w_null,
    case when coalesce(cast(on_missing as varchar), 'zero') = 'zero' then cw_rows_x end
        as cw_rows,
    sws_q,
    sw_q,
    case when coalesce(cast(on_missing as varchar), 'zero') = 'zero' then w_null_q_x end
        as w_null_q,
    case when coalesce(cast(on_missing as varchar), 'zero') = 'zero' then cw_rows_q_x end
        as cw_rows_q,
    n_out,
    n_out_null,
    s_min,
    s_max,
    case when coalesce(cast(any_required as boolean), true) then req_rows_x else 0 end::bigint
        as req_rows,
    case when coalesce(cast(any_required as boolean), true) then req_ms_fail_x else 0 end::bigint
        as req_ms_fail,
    case when coalesce(cast(any_required as boolean), true) then req_t_null_x else 0 end::bigint
        as req_t_null,
    case when coalesce(cast(any_required as boolean), true) then req_t_min_x end as req_t_min,
    case when len(cast(required_children as varchar[])) > 0 then rc_rows_x else 0 end as rc_rows,
    case when len(cast(required_children as varchar[])) > 0 then rc_ms_fail_x else 0 end
        as rc_ms_fail,
    case when len(cast(required_children as varchar[])) > 0 then rc_t_null_x else 0 end as rc_t_null,
    case when len(cast(required_children as varchar[])) > 0 then rc_t_min_x end as rc_t_min,
    case when len(cast(required_children as varchar[])) > 0 then n_rows_rest_x else n_rows end
        as n_rows_rest,
    case when len(cast(required_children as varchar[])) > 0 then n_null_rest_x else n_null end
        as n_null_rest,
    case when len(cast(required_children as varchar[])) > 0 then n_present_rest_x else n_present end
        as n_present_rest,
    case when len(cast(required_children as varchar[])) > 0 then sws_rest_x else sws end as sws_rest,
    case when len(cast(required_children as varchar[])) > 0 then sw_rest_x else sw end as sw_rest,
    case
        when coalesce(cast(on_missing as varchar), 'zero') <> 'zero' then null
        when len(cast(required_children as varchar[])) > 0 then w_null_rest_x
        else w_null_x
    end as w_null_rest,
    case
        when coalesce(cast(on_missing as varchar), 'zero') <> 'zero' then null
        when len(cast(required_children as varchar[])) > 0 then cw_rows_rest_x
        else cw_rows_x
    end as cw_rows_rest,
    case when len(cast(required_children as varchar[])) > 0 then sws_rest_q_x end as sws_rest_q,
    case when len(cast(required_children as varchar[])) > 0 then sw_rest_q_x end as sw_rest_q,
    case
        when coalesce(cast(on_missing as varchar), 'zero') = 'zero'
            and len(cast(required_children as varchar[])) > 0
            then w_null_rest_q_x
    end as w_null_rest_q,
    case
        when coalesce(cast(on_missing as varchar), 'zero') = 'zero'
            and len(cast(required_children as varchar[])) > 0
            then cw_rows_rest_q_x
    end as cw_rows_rest_q,
    n_pass_ms,
    case when coalesce(cast(keep_threshold_scores as boolean), false) then t_scores_x end
        as t_scores,
    case when coalesce(cast(keep_leaf_scores as boolean), false) then leaf_scores_x end
        as leaf_scores,
    mask,
    ev_max,
    bad_nan,
    bad_neg,
    bad_above,
    bad_scale,
    bad_weight,
    n_clamped,
    n_nulled
from grouped;
