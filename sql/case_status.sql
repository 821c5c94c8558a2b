-- case_status(in_baseline, in_candidate, baseline_scored, candidate_scored,
--             baseline_passed, candidate_passed, score_delta, case_delta) — scalar macro:
-- the status of a case (or case × evaluator) in a (baseline, candidate) pair, the first
-- rule that applies (rules/compare.py, SPEC §6); null passed flags never flip.
-- grain:   one value
-- inputs:  booleans in_baseline, in_candidate, baseline_scored, candidate_scored,
--          baseline_passed, candidate_passed; doubles score_delta, case_delta
-- returns: varchar 'new' | 'removed' | 'error' | 'regression' | 'improvement' | 'unchanged'
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro case_status(in_baseline, in_candidate, baseline_scored, candidate_scored, baseline_passed, candidate_passed, score_delta, case_delta) as
    (case when (not in_baseline) then 'new' else (case when (not in_candidate) then 'removed' else (case when ((not baseline_scored) or (not candidate_scored)) then 'error' else (case when (coalesce(baseline_passed, false) and (not coalesce(candidate_passed, false))) then 'regression' else (case when ((not coalesce(baseline_passed, false)) and coalesce(candidate_passed, false)) then 'improvement' else (case when coalesce(((-score_delta) > (case_delta + cast(1e-09 as double))), false) then 'regression' else (case when coalesce((score_delta > (case_delta + cast(1e-09 as double))), false) then 'improvement' else 'unchanged' end) end) end) end) end) end) end);
