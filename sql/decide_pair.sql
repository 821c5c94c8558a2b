-- decide_pair(pass_rate_part, mean_score_part, latency_part) — scalar macro: a pair's
-- decision from its three parts (rules/decide.py, SPEC §12): 'fail' if any part fails, else
-- 'inconclusive' if any is, else 'pass'.
-- grain:   one value
-- inputs:  the parts (varchar 'pass' | 'fail' | 'inconclusive'; decide_part, decide_latency)
-- returns: varchar 'pass' | 'fail' | 'inconclusive'
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro decide_pair(pass_rate_part, mean_score_part, latency_part) as
    (case when (((pass_rate_part = 'fail') or (mean_score_part = 'fail')) or (latency_part = 'fail')) then 'fail' else (case when (((pass_rate_part = 'inconclusive') or (mean_score_part = 'inconclusive')) or (latency_part = 'inconclusive')) then 'inconclusive' else 'pass' end) end);
