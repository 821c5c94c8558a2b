-- execution_scores_at(...) — table macro: execution_scores of a flat config, straight from
-- the input tables (docs/scoring.md); the SQL twin of `evalframe score`: one
-- pass over the judge rows (execution_partials), then the rules (execution_scores_of).
-- grain:   execution (run × case × attempt), one config
-- inputs:  scores, executions, outcomes, evaluator_policy (empty = every evaluator in the
--          data, weight from the data or 1, expected evaluators per run)
-- params:  threshold [0.8], threshold_override [null] (CLI --threshold), borderline [0.6]
--          (null = no band), aggregator ['weighted_average'] (also minimum, maximum,
--          all_or_nothing, safety_gate, threshold), required_children [[]] (root
--          safety_gate), on_missing ['skip'|'zero'|'fail'], outcomes_mode
--          ['gate'|'ignore'|'both'], configured [null = evaluator_policy has rows],
--          config_name ['sql'] (the value of config_id)
-- columns: run_id, case_id, attempt, config_id, status, threshold, score, verdict, passed,
--          required_failed, judge_error, n_missing, n_ignored, outcomes_total,
--          outcomes_passed, latency_ms, cost_usd, input_tokens, output_tokens, tags, then
--          the extra columns of executions
create or replace macro execution_scores_at(
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
with partials as (
    select *
    from execution_partials(
        configured := configured,
        required_children := required_children,
        keep_threshold_scores := aggregator = 'threshold'
    )
)
select *
from execution_scores_of(
    partials_source := 'partials',
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
order by run_id, case_id, attempt;
