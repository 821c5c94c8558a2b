-- decide_pair(pass_rate_part, mean_score_part, latency_part) — scalar macro: a pair's
-- decision from its three parts (rules/decide.py): 'fail' if any part fails, else
-- 'inconclusive' if any is, else 'pass'.
-- grain:   one value
-- inputs:  the parts (varchar 'pass' | 'fail' | 'inconclusive'; decide_part, decide_latency)
-- returns: varchar 'pass' | 'fail' | 'inconclusive'
create or replace macro decide_pair(pass_rate_part, mean_score_part, latency_part) as
    case
        when 'fail' in (pass_rate_part, mean_score_part, latency_part) then 'fail'
        when 'inconclusive' in (pass_rate_part, mean_score_part, latency_part)
            then 'inconclusive'
        else 'pass'
    end;
