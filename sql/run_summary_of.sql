-- run_summary_of(source, ...) — table macro: run_summary from execution_scores rows (SPEC
-- §5): counts, rates, clustered standard errors, latency, cost and run gates. Over the
-- stored results it is a what-if on the gates: run_summary_of(min_pass_rate := 0.9).
-- grain:   config × run (runs of the runs table without executions get zero counts)
-- inputs:  source: name of a relation shaped like execution_scores; runs_source: the runs
--          table (its columns are carried onto each row, `config` as run_config)
-- params:  source ['execution_scores'], min_mean_score [0.8], min_pass_rate [1.0],
--          attempts_score ['mean'], attempts_passed ['all'] (for case_pass_rate),
--          runs_source ['runs'], config_name [null] (a config_id to give rows to runs of
--          the runs table even when source holds no execution)
-- columns: config_id, run_id, executions, cases, passed, failed, errored, unscored,
--          n_pass, n_borderline, n_fail, pass_rate, mean_score, case_pass_rate,
--          pass_rate_se, mean_score_se, latency_mean, latency_p50, latency_p95,
--          latency_max, cost_usd, input_tokens, output_tokens, min_mean_score,
--          min_pass_rate, mean_score_gate, pass_rate_gate, run_passed, then the columns of
--          the runs table (created_at, label, run_config, metadata)
create or replace macro run_summary_of(
    source := 'execution_scores',
    min_mean_score := 0.8,
    min_pass_rate := 1.0,
    attempts_score := 'mean',
    attempts_passed := 'all',
    runs_source := 'runs',
    config_name := null
) as table
with gate_settings as (
    select
        cast(min_mean_score as double) as gate_mean_score,
        cast(min_pass_rate as double) as gate_pass_rate
),
run_groups as (
    select
        config_id,
        run_id,
        count(*)::bigint as n_executions,
        count(distinct case_id)::bigint as n_cases,
        count(*) filter (where passed)::bigint as n_passed,
        count(*) filter (
            where not passed and status <> 'error' and verdict <> 'unscored'
        )::bigint as n_failed,
        count(*) filter (where status = 'error')::bigint as n_errored,
        count(*) filter (where verdict = 'unscored')::bigint as n_unscored,
        count(*) filter (where verdict = 'pass')::bigint as n_verdict_pass,
        count(*) filter (where verdict = 'borderline')::bigint as n_verdict_borderline,
        count(*) filter (where verdict = 'fail')::bigint as n_verdict_fail,
        avg(passed::double) as pass_rate_value,
        avg(score) as mean_score_value,
        avg(latency_ms) as latency_mean_value,
        quantile_cont(latency_ms, 0.5) as latency_p50_value,
        quantile_cont(latency_ms, 0.95) as latency_p95_value,
        max(latency_ms) as latency_max_value,
        sum(cost_usd)::double as cost_value,
        sum(input_tokens)::bigint as input_tokens_value,
        sum(output_tokens)::bigint as output_tokens_value
    from query_table(source)
    group by config_id, run_id
),
case_clusters as (
    select
        config_id,
        run_id,
        case_id,
        sum(passed::double) as pass_sum,
        count(*)::double as pass_n,
        sum(score) as score_sum,
        count(score)::double as score_n
    from query_table(source)
    group by config_id, run_id, case_id
),
run_standard_errors as (
    select
        config_id,
        run_id,
        clustered_se(list({'sum_x': pass_sum, 'n': pass_n})) as pass_rate_se_value,
        clustered_se(list({'sum_x': score_sum, 'n': score_n}) filter (where score_n > 0))
            as mean_score_se_value
    from case_clusters
    group by config_id, run_id
),
case_pass_rates as (
    select config_id, run_id, avg(passed::double) as case_pass_rate_value
    from case_summary_of(
        source, attempts_score := attempts_score, attempts_passed := attempts_passed
    )
    group by config_id, run_id
),
config_ids as (
    select distinct config_id from run_groups
    union
    select cast(config_name as varchar) as config_id where config_name is not null
),
run_keys as (
    select config_id, run_id from run_groups
    union
    select c.config_id, r.run_id
    from query_table(runs_source) as r
    cross join config_ids as c
)
select
    k.config_id,
    k.run_id,
    coalesce(g.n_executions, 0)::bigint as executions,
    coalesce(g.n_cases, 0)::bigint as cases,
    coalesce(g.n_passed, 0)::bigint as passed,
    coalesce(g.n_failed, 0)::bigint as failed,
    coalesce(g.n_errored, 0)::bigint as errored,
    coalesce(g.n_unscored, 0)::bigint as unscored,
    coalesce(g.n_verdict_pass, 0)::bigint as n_pass,
    coalesce(g.n_verdict_borderline, 0)::bigint as n_borderline,
    coalesce(g.n_verdict_fail, 0)::bigint as n_fail,
    g.pass_rate_value as pass_rate,
    g.mean_score_value as mean_score,
    cp.case_pass_rate_value as case_pass_rate,
    se.pass_rate_se_value as pass_rate_se,
    se.mean_score_se_value as mean_score_se,
    g.latency_mean_value as latency_mean,
    g.latency_p50_value as latency_p50,
    g.latency_p95_value as latency_p95,
    g.latency_max_value as latency_max,
    g.cost_value as cost_usd,
    g.input_tokens_value as input_tokens,
    g.output_tokens_value as output_tokens,
    gs.gate_mean_score as min_mean_score,
    gs.gate_pass_rate as min_pass_rate,
    coalesce(meets(g.mean_score_value, gs.gate_mean_score), false) as mean_score_gate,
    coalesce(meets(g.pass_rate_value, gs.gate_pass_rate), false) as pass_rate_gate,
    coalesce(meets(g.mean_score_value, gs.gate_mean_score), false)
        and coalesce(meets(g.pass_rate_value, gs.gate_pass_rate), false) as run_passed,
    r.* exclude (run_id) rename (config as run_config)
from run_keys as k
left join run_groups as g on g.config_id = k.config_id and g.run_id = k.run_id
left join case_pass_rates as cp on cp.config_id = k.config_id and cp.run_id = k.run_id
left join run_standard_errors as se on se.config_id = k.config_id and se.run_id = k.run_id
left join query_table(runs_source) as r on r.run_id = k.run_id
cross join gate_settings as gs
order by k.config_id, r.created_at nulls last, k.run_id;
