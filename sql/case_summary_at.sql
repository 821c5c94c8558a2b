-- case_summary_at(...) — table macro: case_summary of a flat config straight from the
-- input tables (execution_scores_at, then case_summary_of).
-- grain:   run × case, one config
-- inputs:  scores, executions, outcomes, evaluator_policy
-- params:  those of execution_scores_at, plus attempts_score ['mean'|'min'|'max'] and
--          attempts_passed ['all'|'any'|'majority']
-- columns: as case_summary_of
create or replace macro case_summary_at(
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
    attempts_passed := 'all'
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
from case_summary_of(
    'scored_executions', attempts_score := attempts_score, attempts_passed := attempts_passed
);
