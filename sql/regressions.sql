-- regressions — view: the cases that regressed in the stored comparisons, worst first.
-- grain:   config × pair × case (status 'regression' only)
-- inputs:  case_deltas (view over results/case_deltas.parquet)
-- columns: config_id, baseline_run_id, candidate_run_id, case_id, baseline_score,
--          candidate_score, score_delta, baseline_passed, candidate_passed, lost_pass
--          (passed → not passed)
create or replace view regressions as
select
    config_id,
    baseline_run_id,
    candidate_run_id,
    case_id,
    baseline_score,
    candidate_score,
    score_delta,
    baseline_passed,
    candidate_passed,
    coalesce(baseline_passed, false) and not coalesce(candidate_passed, false) as lost_pass
from case_deltas
where status = 'regression'
order by config_id, baseline_run_id, candidate_run_id, lost_pass desc, score_delta nulls first,
    case_id;
