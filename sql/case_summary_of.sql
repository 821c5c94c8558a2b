-- case_summary_of(source, ...) — table macro: case_summary from execution_scores rows:
-- repeated attempts of a case reduced to one row (rules/attempts.py). Over the stored
-- results it is a what-if on the attempts policy:
-- case_summary_of('execution_scores', attempts_passed := 'any').
-- grain:   config × run × case
-- inputs:  source: name of a table, view or CTE shaped like execution_scores
-- params:  source ['execution_scores'], attempts_score ['mean'|'min'|'max'],
--          attempts_passed ['all'|'any'|'majority']
-- columns: config_id, run_id, case_id, attempts, errored, scored, unscored,
--          score, n_passed, pass_rate, passed, flaky, latency_mean, cost_usd
create or replace macro case_summary_of(
    source := 'execution_scores',
    attempts_score := 'mean',
    attempts_passed := 'all'
) as table
with cases as (
    select
        config_id,
        run_id,
        case_id,
        count(*) as attempts,
        count(*) filter (where status = 'error') as errored,
        count(score) as scored,
        count(*) filter (where verdict = 'unscored') as unscored,
        avg(score) as score_mean,
        min(score) as score_min,
        max(score) as score_max,
        count(*) filter (where passed) as n_passed,
        avg(latency_ms) as latency_mean,
        sum(cost_usd) as cost_usd
    from query_table(source)
    group by config_id, run_id, case_id
)
select
    config_id,
    run_id,
    case_id,
    attempts,
    errored,
    scored,
    unscored,
    case attempts_score
        when 'min' then score_min
        when 'max' then score_max
        else score_mean
    end as score,
    n_passed,
    n_passed / attempts as pass_rate,
    case_passed(n_passed, attempts, attempts_passed) as passed,
    n_passed > 0 and n_passed < attempts as flaky,
    latency_mean,
    cost_usd
from cases
order by config_id, run_id, case_id;
