-- case_deltas_at(...) — table macro: case_deltas of a flat config straight from the input
-- tables, e.g. select * from case_deltas_at(baseline := 'run-a', candidate := 'run-b',
-- threshold := 0.7).
-- grain:   pair × case, one config
-- inputs:  scores, executions, outcomes, evaluator_policy; compare_pairs when baseline /
--          candidate are not given
-- params:  those of case_summary_at, plus baseline [null], candidate [null],
--          case_delta [0.05]
-- columns: as case_deltas_of
create or replace macro case_deltas_at(
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
    case_delta := 0.05
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
)
select *
from case_deltas_of(
    'scored_cases', baseline := baseline, candidate := candidate, case_delta := case_delta
);
