-- case_deltas_of(...) — table macro: case_deltas from case summaries: each
-- case of each (baseline, candidate) pair with both sides and its status.
-- grain:   config × pair × case
-- inputs:  case_source: a relation shaped like case_summary (default: the stored results);
--          the pair: baseline and candidate, or the rows of pairs_source
-- params:  case_source ['case_summary'], baseline [null], candidate [null],
--          case_delta [0.05], pairs_source ['compare_pairs']
-- columns: config_id, baseline_run_id, candidate_run_id, case_id, baseline_score,
--          candidate_score, baseline_passed, candidate_passed, baseline_pass_rate,
--          candidate_pass_rate, baseline_latency_mean, candidate_latency_mean,
--          score_delta, status ('new', 'removed', 'error', 'regression', 'improvement',
--          'unchanged')
create or replace macro case_deltas_of(
    case_source := 'case_summary',
    baseline := null,
    candidate := null,
    case_delta := 0.05,
    pairs_source := 'compare_pairs'
) as table
select
    config_id,
    baseline_run_id,
    candidate_run_id,
    case_id,
    baseline_score,
    candidate_score,
    baseline_passed,
    candidate_passed,
    baseline_pass_rate,
    candidate_pass_rate,
    baseline_latency_mean,
    candidate_latency_mean,
    score_delta,
    status
from case_matches_of(
    case_source,
    baseline := baseline,
    candidate := candidate,
    case_delta := case_delta,
    pairs_source := pairs_source
)
order by config_id, pair_index, case_id;
