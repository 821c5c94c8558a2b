-- decide_part(ci_low, ci_high, margin) — scalar macro: one part of a pair's three-outcome
-- decision (rules/decide.py): 'fail' when the paired 95 % interval's high end lies
-- below −margin (ci_high < −margin − EPS), 'pass' when its low end meets −margin
-- (ci_low ≥ −margin − EPS), else 'inconclusive' (also when the interval is null).
-- grain:   one value
-- inputs:  ci_low, ci_high (the interval of paired_pass_delta or mean_delta), margin
--          (decide.pass_rate_margin or decide.mean_score_margin)
-- returns: varchar 'pass' | 'fail' | 'inconclusive', never null
create or replace macro decide_part(ci_low, ci_high, margin) as
    case
        when coalesce(exceeds(-ci_high, margin), false) then 'fail'
        when coalesce(meets(ci_low, -margin), false) then 'pass'
        else 'inconclusive'
    end;
