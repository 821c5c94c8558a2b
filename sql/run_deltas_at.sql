-- run_deltas_at(...) — table macro: run_deltas of a flat config straight from the input
-- tables, e.g. select reasons, regression_detected from run_deltas_at(baseline := 'run-a',
-- candidate := 'run-b', max_mean_score_drop := 0.02).
-- grain:   pair, one config
-- inputs:  scores, executions, outcomes, runs, evaluator_policy; compare_pairs when
--          baseline / candidate are not given
-- params:  those of run_summary_at, plus baseline [null], candidate [null],
--          max_pass_rate_drop [0.0], max_mean_score_drop [0.05], max_latency_increase
--          [0.2], case_delta [0.05], require_significance [false], pass_rate_margin
--          [0.05], mean_score_margin [0.05]
-- columns: as run_deltas_of
create or replace macro run_deltas_at(
    baseline := null,
    candidate := null,
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
    min_pass_rate_lower := null,
    max_pass_rate_drop := 0.0,
    max_mean_score_drop := 0.05,
    max_latency_increase := 0.2,
    case_delta := 0.05,
    require_significance := false,
    pass_rate_margin := 0.05,
    mean_score_margin := 0.05
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
),
scored_cases as (
    select *
    from case_summary_of(
        'scored_executions', attempts_score := attempts_score, attempts_passed := attempts_passed
    )
),
scored_runs as (
    select *
    from run_summary_of(
        'scored_executions',
        min_mean_score := min_mean_score,
        min_pass_rate := min_pass_rate,
        min_pass_rate_lower := min_pass_rate_lower,
        attempts_score := attempts_score,
        attempts_passed := attempts_passed,
        config_name := config_name
    )
)
select *
from run_deltas_of(
    'scored_cases',
    'scored_runs',
    baseline := baseline,
    candidate := candidate,
    max_pass_rate_drop := max_pass_rate_drop,
    max_mean_score_drop := max_mean_score_drop,
    max_latency_increase := max_latency_increase,
    case_delta := case_delta,
    require_significance := require_significance,
    pass_rate_margin := pass_rate_margin,
    mean_score_margin := mean_score_margin
);
