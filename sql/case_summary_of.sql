-- case_summary_of(source, ...) — table macro: case_summary from execution_scores rows
-- (SPEC §4): repeated attempts of a case reduced to one row. Over the stored results it
-- is a what-if on the attempts policy: case_summary_of('execution_scores', attempts_passed
-- := 'any').
-- grain:   config × run × case
-- inputs:  source: name of a table, view or CTE shaped like execution_scores
-- params:  source ['execution_scores'], attempts_score ['mean'|'min'|'max'],
--          attempts_passed ['all'|'any'|'majority']
-- columns: config_id, run_id, case_id, attempts, errored, scored, unscored, score,
--          n_passed, pass_rate, passed, flaky, latency_mean, cost_usd
create or replace macro case_summary_of(
    source := 'execution_scores',
    attempts_score := 'mean',
    attempts_passed := 'all'
) as table
with case_groups as (
    select
        config_id,
        run_id,
        case_id,
        count(*)::bigint as n_attempts,
        count(*) filter (where status = 'error')::bigint as n_errored,
        count(score)::bigint as n_scored,
        count(*) filter (where verdict = 'unscored')::bigint as n_unscored,
        avg(score) as mean_score,
        min(score) as min_score,
        max(score) as max_score,
        count(*) filter (where passed)::bigint as n_attempts_passed,
        avg(latency_ms) as mean_latency,
        sum(cost_usd) as total_cost
    from query_table(source)
    group by config_id, run_id, case_id
)
select
    config_id,
    run_id,
    case_id,
    n_attempts as attempts,
    n_errored as errored,
    n_scored as scored,
    n_unscored as unscored,
    case cast(attempts_score as varchar)
        when 'min' then min_score
        when 'max' then max_score
        else mean_score
    end as score,
    n_attempts_passed as n_passed,
    n_attempts_passed / n_attempts as pass_rate,
    case cast(attempts_passed as varchar)
        when 'any' then n_attempts_passed >= 1
        when 'majority' then 2 * n_attempts_passed > n_attempts
        else n_attempts_passed = n_attempts
    end as passed,
    n_attempts_passed > 0 and n_attempts_passed < n_attempts as flaky,
    mean_latency as latency_mean,
    total_cost as cost_usd
from case_groups
order by config_id, run_id, case_id;
