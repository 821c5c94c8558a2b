-- run_deltas_of(...) — table macro: run_deltas from case and run summaries:
-- per pair, the run-level deltas, case status counts, paired statistics (mean delta,
-- its SE and 95 % interval, exact McNemar p, the paired pass-rate change and the minimum
-- detectable effects) and the regression reasons.
-- grain:   config × pair
-- inputs:  case_source (shaped like case_summary), run_source (shaped like run_summary);
--          the pair: baseline and candidate, or the rows of pairs_source
-- params:  case_source ['case_summary'], run_source ['run_summary'], baseline [null],
--          candidate [null], max_pass_rate_drop [0.0], max_mean_score_drop [0.05],
--          max_latency_increase [0.2], case_delta [0.05], pairs_source ['compare_pairs'],
--          require_significance [false]: drops count only when their paired 95 % interval
--          lies wholly below 0, pass_rate_margin [0.05], mean_score_margin [0.05] (the
--          non-inferiority margins of the decision, config `decide:`)
-- columns: config_id, baseline_run_id, candidate_run_id, baseline_/candidate_ pass_rate,
--          mean_score, latency_mean, latency_p95, cost_usd; pass_rate_delta,
--          mean_score_delta, latency_mean_delta, latency_p95_delta, cost_delta; n_new,
--          n_removed, n_error, n_regression, n_improvement, n_unchanged; n_paired,
--          mean_delta, mean_delta_se, mean_delta_ci_low, mean_delta_ci_high,
--          n_passed_to_failed, n_failed_to_passed, mcnemar_p; paired_pass_delta,
--          paired_pass_delta_se, paired_pass_delta_ci_low, paired_pass_delta_ci_high,
--          mde_pass_rate, mde_mean_score (mde(se)); reasons (list of
--          'pass_rate_drop', 'mean_score_drop', 'latency_increase'), regression_detected;
--          decision ('pass' | 'fail' | 'inconclusive': decide_part on each paired
--          interval, decide_latency, decide_pair) and decision_reasons (list of the
--          parts that are not 'pass': 'pass_rate', 'mean_score', 'latency')
create or replace macro run_deltas_of(
    case_source := 'case_summary',
    run_source := 'run_summary',
    baseline := null,
    candidate := null,
    max_pass_rate_drop := 0.0,
    max_mean_score_drop := 0.05,
    max_latency_increase := 0.2,
    case_delta := 0.05,
    pairs_source := 'compare_pairs',
    require_significance := false,
    pass_rate_margin := 0.05,
    mean_score_margin := 0.05
) as table
with limit_settings as (
    select
        cast(max_pass_rate_drop as double) as limit_pass_rate_drop,
        cast(max_mean_score_drop as double) as limit_mean_score_drop,
        cast(max_latency_increase as double) as limit_latency_increase,
        coalesce(cast(require_significance as boolean), false) as limit_significance,
        cast(pass_rate_margin as double) as margin_pass_rate,
        cast(mean_score_margin as double) as margin_mean_score
),
given_pairs as (
    select
        0::bigint as pair_index,
        cast(baseline as varchar) as baseline_run_id,
        cast(candidate as varchar) as candidate_run_id
    where baseline is not null and candidate is not null
    union all
    select pair_index::bigint, baseline_run_id::varchar, candidate_run_id::varchar
    from query_table(pairs_source)
    where baseline is null or candidate is null
),
distinct_pairs as (
    select min(pair_index) as pair_index, baseline_run_id, candidate_run_id
    from given_pairs
    group by baseline_run_id, candidate_run_id
),
config_ids as (
    select distinct config_id from query_table(case_source)
    union
    select distinct config_id from query_table(run_source)
),
run_stats as (
    select
        config_id,
        run_id,
        pass_rate::double as pass_rate,
        mean_score::double as mean_score,
        latency_mean::double as latency_mean,
        latency_p95::double as latency_p95,
        cost_usd::double as cost_usd
    from query_table(run_source)
),
case_counts as (
    select
        config_id,
        pair_index,
        count(*) filter (where status = 'new') as n_new,
        count(*) filter (where status = 'removed') as n_removed,
        count(*) filter (where status = 'error') as n_error,
        count(*) filter (where status = 'regression') as n_regression,
        count(*) filter (where status = 'improvement') as n_improvement,
        count(*) filter (where status = 'unchanged') as n_unchanged,
        count(score_delta) filter (
            where in_baseline and in_candidate and baseline_scored and candidate_scored
        ) as n_paired,
        avg(score_delta) filter (
            where in_baseline and in_candidate and baseline_scored and candidate_scored
        ) as mean_delta,
        stddev_samp(score_delta) filter (
            where in_baseline and in_candidate and baseline_scored and candidate_scored
        ) as sd_delta,
        count(*) filter (
            where in_baseline and in_candidate
            and coalesce(baseline_passed, false) and not coalesce(candidate_passed, false)
        ) as n_passed_to_failed,
        count(*) filter (
            where in_baseline and in_candidate
            and not coalesce(baseline_passed, false) and coalesce(candidate_passed, false)
        ) as n_failed_to_passed,
        count(*) filter (
            where in_baseline and in_candidate
            and baseline_passed is not null and candidate_passed is not null
        ) as n_pass_paired,
        avg(candidate_passed::int - baseline_passed::int) filter (
            where in_baseline and in_candidate
            and baseline_passed is not null and candidate_passed is not null
        )::double as pass_delta,
        stddev_samp(candidate_passed::int - baseline_passed::int) filter (
            where in_baseline and in_candidate
            and baseline_passed is not null and candidate_passed is not null
        ) as sd_pass_delta
    from case_matches_of(
        case_source,
        baseline := baseline,
        candidate := candidate,
        case_delta := case_delta,
        pairs_source := pairs_source
    )
    group by config_id, pair_index
),
pair_rows as (
    select
        c.config_id,
        p.pair_index,
        p.baseline_run_id,
        p.candidate_run_id,
        b.pass_rate as baseline_pass_rate,
        k.pass_rate as candidate_pass_rate,
        b.mean_score as baseline_mean_score,
        k.mean_score as candidate_mean_score,
        b.latency_mean as baseline_latency_mean,
        k.latency_mean as candidate_latency_mean,
        b.latency_p95 as baseline_latency_p95,
        k.latency_p95 as candidate_latency_p95,
        b.cost_usd as baseline_cost_usd,
        k.cost_usd as candidate_cost_usd,
        coalesce(n.n_new, 0)::bigint as n_new,
        coalesce(n.n_removed, 0)::bigint as n_removed,
        coalesce(n.n_error, 0)::bigint as n_error,
        coalesce(n.n_regression, 0)::bigint as n_regression,
        coalesce(n.n_improvement, 0)::bigint as n_improvement,
        coalesce(n.n_unchanged, 0)::bigint as n_unchanged,
        coalesce(n.n_paired, 0)::bigint as n_paired,
        n.mean_delta,
        case when n.n_paired >= 2 then n.sd_delta / sqrt(n.n_paired) end as mean_delta_se,
        coalesce(n.n_passed_to_failed, 0)::bigint as n_passed_to_failed,
        coalesce(n.n_failed_to_passed, 0)::bigint as n_failed_to_passed,
        n.pass_delta as paired_pass_delta,
        case
            when n.n_pass_paired >= 2 then n.sd_pass_delta / sqrt(n.n_pass_paired)
        end as paired_pass_delta_se
    from distinct_pairs as p
    cross join config_ids as c
    left join run_stats as b on b.config_id = c.config_id and b.run_id = p.baseline_run_id
    left join run_stats as k on k.config_id = c.config_id and k.run_id = p.candidate_run_id
    left join case_counts as n on n.config_id = c.config_id and n.pair_index = p.pair_index
),
pair_reasons as (
    select
        r.*,
        list_filter(
            [
                case
                    when drop_regressed(
                        r.baseline_pass_rate - r.candidate_pass_rate,
                        s.limit_pass_rate_drop,
                        s.limit_significance,
                        ci_high(r.paired_pass_delta, r.paired_pass_delta_se)
                    )
                        then 'pass_rate_drop'
                end,
                case
                    when drop_regressed(
                        r.baseline_mean_score - r.candidate_mean_score,
                        s.limit_mean_score_drop,
                        s.limit_significance,
                        ci_high(r.mean_delta, r.mean_delta_se)
                    )
                        then 'mean_score_drop'
                end,
                case
                    when latency_regressed(
                        r.baseline_latency_mean, r.candidate_latency_mean, s.limit_latency_increase
                    )
                        then 'latency_increase'
                end
            ],
            lambda reason: reason is not null
        )::varchar[] as regression_reasons,
        decide_part(
            ci_low(r.paired_pass_delta, r.paired_pass_delta_se),
            ci_high(r.paired_pass_delta, r.paired_pass_delta_se),
            s.margin_pass_rate
        ) as part_pass_rate,
        decide_part(
            ci_low(r.mean_delta, r.mean_delta_se),
            ci_high(r.mean_delta, r.mean_delta_se),
            s.margin_mean_score
        ) as part_mean_score,
        decide_latency(
            r.baseline_latency_mean, r.candidate_latency_mean, s.limit_latency_increase
        ) as part_latency
    from pair_rows as r
    cross join limit_settings as s
)
select
    config_id,
    baseline_run_id,
    candidate_run_id,
    baseline_pass_rate,
    candidate_pass_rate,
    baseline_mean_score,
    candidate_mean_score,
    baseline_latency_mean,
    candidate_latency_mean,
    baseline_latency_p95,
    candidate_latency_p95,
    baseline_cost_usd,
    candidate_cost_usd,
    candidate_pass_rate - baseline_pass_rate as pass_rate_delta,
    candidate_mean_score - baseline_mean_score as mean_score_delta,
    candidate_latency_mean - baseline_latency_mean as latency_mean_delta,
    candidate_latency_p95 - baseline_latency_p95 as latency_p95_delta,
    candidate_cost_usd - baseline_cost_usd as cost_delta,
    n_new,
    n_removed,
    n_error,
    n_regression,
    n_improvement,
    n_unchanged,
    n_paired,
    mean_delta,
    mean_delta_se,
    ci_low(mean_delta, mean_delta_se) as mean_delta_ci_low,
    ci_high(mean_delta, mean_delta_se) as mean_delta_ci_high,
    n_passed_to_failed,
    n_failed_to_passed,
    mcnemar_p(n_passed_to_failed, n_failed_to_passed) as mcnemar_p,
    paired_pass_delta,
    paired_pass_delta_se,
    ci_low(paired_pass_delta, paired_pass_delta_se) as paired_pass_delta_ci_low,
    ci_high(paired_pass_delta, paired_pass_delta_se) as paired_pass_delta_ci_high,
    mde(paired_pass_delta_se) as mde_pass_rate,
    mde(mean_delta_se) as mde_mean_score,
    regression_reasons as reasons,
    len(regression_reasons) > 0 as regression_detected,
    decide_pair(part_pass_rate, part_mean_score, part_latency) as decision,
    list_filter(
        [
            case when part_pass_rate <> 'pass' then 'pass_rate' end,
            case when part_mean_score <> 'pass' then 'mean_score' end,
            case when part_latency <> 'pass' then 'latency' end
        ],
        lambda part: part is not null
    )::varchar[] as decision_reasons
from pair_reasons
order by config_id, pair_index;
