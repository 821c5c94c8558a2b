-- run_summary_of(source, ...) — table macro: run_summary from execution_scores rows:
-- counts, rates, clustered standard errors, latency, cost and run gates (rules/runs.py,
-- rules/run_gates.py). Over the stored results it is a what-if on the gates:
-- run_summary_of(min_pass_rate := 0.9).
-- grain:   config × run (runs of the runs table without executions get zero counts)
-- inputs:  source: name of a relation shaped like execution_scores; runs_source: the runs
--          table (its columns are carried onto each row, `config` as run_config)
-- params:  source ['execution_scores'], min_mean_score [0.8], min_pass_rate [1.0],
--          min_pass_rate_lower [null: no gate on the bound],
--          attempts_score ['mean'] (kept for calls that pass it; no column depends on
--          it), attempts_passed ['all'] (for case_pass_rate), runs_source ['runs'],
--          config_name [null] (a config_id to give rows to runs of the runs table even
--          when source holds no execution)
-- columns: config_id, run_id, executions, cases, passed, failed, errored, unscored,
--          n_pass, n_borderline, n_fail, pass_rate, mean_score, case_pass_rate,
--          pass_rate_se, mean_score_se, latency_mean, latency_p50, latency_p95,
--          latency_max, cost_usd, input_tokens, output_tokens, min_mean_score,
--          min_pass_rate, min_pass_rate_lower, pass_rate_lower, mean_score_gate,
--          pass_rate_gate, pass_rate_lower_gate, run_passed, run_gate_failures,
--          then the columns of the runs table (created_at, label, run_config, metadata)
-- The standard errors are clustered by case: with G cases of n_c attempts, x_c of them
-- passed (or scored attempts and their score sum), sqrt(G/(G-1) · Σ_c (x_c − n_c · x̄)²) / Σ n_c
-- (as clustered_se).
create or replace macro run_summary_of(
    source := 'execution_scores',
    min_mean_score := 0.8,
    min_pass_rate := 1.0,
    min_pass_rate_lower := null,
    attempts_score := 'mean',
    attempts_passed := 'all',
    runs_source := 'runs',
    config_name := null
) as table
with run_groups as (
    select
        config_id,
        run_id,
        count(*) as executions,
        count(*) filter (where passed) as passed,
        count(*) filter (
            where not passed and status <> 'error' and verdict <> 'unscored'
        ) as failed,
        count(*) filter (where status = 'error') as errored,
        count(*) filter (where verdict = 'unscored') as unscored,
        count(*) filter (where verdict = 'pass') as n_pass,
        count(*) filter (where verdict = 'borderline') as n_borderline,
        count(*) filter (where verdict = 'fail') as n_fail,
        avg(passed::double) as pass_rate,
        avg(score) as mean_score,
        avg(latency_ms) as latency_mean,
        quantile_cont(latency_ms, 0.5) as latency_p50,
        quantile_cont(latency_ms, 0.95) as latency_p95,
        max(latency_ms) as latency_max,
        sum(cost_usd)::double as cost_usd,
        sum(input_tokens)::bigint as input_tokens,
        sum(output_tokens)::bigint as output_tokens
    from query_table(source)
    group by config_id, run_id
),
case_rows as (
    select
        config_id,
        run_id,
        count(*)::double as n,
        (count(*) filter (where passed))::double as k,
        count(score)::double as n_scored,
        coalesce(sum(score), 0) as score_sum
    from query_table(source)
    group by config_id, run_id, case_id
),
case_terms as (
    select
        config_id,
        run_id,
        n,
        n_scored,
        case_passed(k, n, attempts_passed) as case_passed,
        case
            when n > 0 then (k - n * (sum(k) over run / sum(n) over run)) ** 2
        end as deviation_k,
        case
            when n_scored > 0
                then (score_sum - n_scored * (sum(score_sum) over run / sum(n_scored) over run)) ** 2
        end as deviation_score
    from case_rows
    window run as (partition by config_id, run_id)
),
run_cases as (
    select
        config_id,
        run_id,
        count(*) as cases,
        avg(case_passed::double) as case_pass_rate,
        case
            when count(deviation_k) >= 2
                then sqrt(count(deviation_k) / (count(deviation_k) - 1) * sum(deviation_k)) / sum(n)
        end as pass_rate_se,
        case
            when count(deviation_score) >= 2
                then sqrt(
                    count(deviation_score) / (count(deviation_score) - 1) * sum(deviation_score)
                ) / sum(n_scored)
        end as mean_score_se
    from case_terms
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
    coalesce(g.executions, 0)::bigint as executions,
    coalesce(c.cases, 0)::bigint as cases,
    coalesce(g.passed, 0)::bigint as passed,
    coalesce(g.failed, 0)::bigint as failed,
    coalesce(g.errored, 0)::bigint as errored,
    coalesce(g.unscored, 0)::bigint as unscored,
    coalesce(g.n_pass, 0)::bigint as n_pass,
    coalesce(g.n_borderline, 0)::bigint as n_borderline,
    coalesce(g.n_fail, 0)::bigint as n_fail,
    g.pass_rate,
    g.mean_score,
    c.case_pass_rate,
    c.pass_rate_se,
    c.mean_score_se,
    g.latency_mean,
    g.latency_p50,
    g.latency_p95,
    g.latency_max,
    g.cost_usd,
    g.input_tokens,
    g.output_tokens,
    cast(min_mean_score as double) as min_mean_score,
    cast(min_pass_rate as double) as min_pass_rate,
    cast(min_pass_rate_lower as double) as min_pass_rate_lower,
    pass_rate_lower(g.pass_rate, c.pass_rate_se, coalesce(c.cases, 0)) as pass_rate_lower,
    run_gate(g.mean_score, min_mean_score) as mean_score_gate,
    run_gate(g.pass_rate, min_pass_rate) as pass_rate_gate,
    min_pass_rate_lower is null
        or run_gate(pass_rate_lower, min_pass_rate_lower) as pass_rate_lower_gate,
    mean_score_gate and pass_rate_gate and pass_rate_lower_gate as run_passed,
    list_filter(
        [
            case when not mean_score_gate then 'min_mean_score' end,
            case when not pass_rate_gate then 'min_pass_rate' end,
            case when not pass_rate_lower_gate then 'min_pass_rate_lower' end
        ],
        lambda x: x is not null
    )::varchar[] as run_gate_failures,
    r.* exclude (run_id) rename (config as run_config)
from run_keys as k
left join run_groups as g on g.config_id = k.config_id and g.run_id = k.run_id
left join run_cases as c on c.config_id = k.config_id and c.run_id = k.run_id
left join query_table(runs_source) as r on r.run_id = k.run_id
order by k.config_id, r.created_at nulls last, k.run_id;
