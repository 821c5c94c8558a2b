-- case_status(in_baseline, in_candidate, baseline_scored, candidate_scored,
--             baseline_passed, candidate_passed, score_delta, case_delta) — scalar macro:
-- the status of a case (or case × evaluator) in a (baseline, candidate) pair, the first
-- rule that applies (rules/compare.py); null passed flags never flip.
-- grain:   one value
-- inputs:  booleans in_baseline, in_candidate, baseline_scored, candidate_scored,
--          baseline_passed, candidate_passed; doubles score_delta, case_delta
-- returns: varchar 'new' | 'removed' | 'error' | 'regression' | 'improvement' | 'unchanged'
create or replace macro case_status(
    in_baseline,
    in_candidate,
    baseline_scored,
    candidate_scored,
    baseline_passed,
    candidate_passed,
    score_delta,
    case_delta
) as
    case
        when not in_baseline then 'new'
        when not in_candidate then 'removed'
        when not baseline_scored or not candidate_scored then 'error'
        when coalesce(baseline_passed, false) and not coalesce(candidate_passed, false)
            then 'regression'
        when not coalesce(baseline_passed, false) and coalesce(candidate_passed, false)
            then 'improvement'
        when coalesce(exceeds(-score_delta, case_delta), false) then 'regression'
        when coalesce(exceeds(score_delta, case_delta), false) then 'improvement'
        else 'unchanged'
    end;
