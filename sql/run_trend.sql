-- run_trend — view: the stored run summaries in run order, with a Wilson 95 % interval of
-- each pass rate and the change from the run before.
-- grain:   config × run
-- inputs:  run_summary (view over results/run_summary.parquet)
-- columns: config_id, run_id, created_at, executions, passed, pass_rate, pass_rate_low,
--          pass_rate_high (Wilson 95 %), pass_rate_change, mean_score, mean_score_se,
--          mean_score_change, latency_p95, run_passed
create or replace view run_trend as
with ordered_runs as (
    select
        *,
        wilson_interval(passed, executions) as pass_rate_interval
    from run_summary
)
select
    config_id,
    run_id,
    created_at,
    executions,
    passed,
    pass_rate,
    pass_rate_interval.low as pass_rate_low,
    pass_rate_interval.high as pass_rate_high,
    pass_rate - lag(pass_rate) over runs_in_order as pass_rate_change,
    mean_score,
    mean_score_se,
    mean_score - lag(mean_score) over runs_in_order as mean_score_change,
    latency_p95,
    run_passed
from ordered_runs
window runs_in_order as (partition by config_id order by created_at nulls last, run_id)
order by config_id, created_at nulls last, run_id;
