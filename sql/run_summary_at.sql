-- run_summary_at(...) — table macro: run_summary of a flat config straight from the input
-- tables, e.g. select * from run_summary_at(threshold := 0.7, borderline := 0.5).
-- grain:   run, one config
-- inputs:  scores, executions, outcomes, runs, evaluator_policy
-- params:  those of execution_scores_at, plus attempts_score ['mean'], attempts_passed
--          ['all'], min_mean_score [0.8], min_pass_rate [1.0], min_pass_rate_lower [null]
-- columns: as run_summary_of
create or replace macro run_summary_at(
    threshold := 0.8,
    threshold_override := null,
    borderline := 0.6,
    aggregator := 'weighted_average',
    required_children := []::varchar[],
    on_missing := 'skip',
    outcomes_mode := 'gate',
    configured := null,
    config_name := 'sql',
    attempts_score := 'mean',
    attempts_passed := 'all',
    min_mean_score := 0.8,
    min_pass_rate := 1.0,
    min_pass_rate_lower := null
) as table
with scored_executions as (
    select *
    from execution_scores_at(
        threshold := threshold,
        threshold_override := threshold_override,
        borderline := borderline,
        aggregator := aggregator,
        required_children := required_children,
        on_missing := on_missing,
        outcomes_mode := outcomes_mode,
        configured := configured,
        config_name := config_name
    )
)
select *
from run_summary_of(
    'scored_executions',
    min_mean_score := min_mean_score,
    min_pass_rate := min_pass_rate,
    min_pass_rate_lower := min_pass_rate_lower,
    attempts_score := attempts_score,
    attempts_passed := attempts_passed,
    config_name := config_name
);
