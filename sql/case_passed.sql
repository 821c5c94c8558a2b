-- case_passed(n_passed, attempts, attempts_passed) — scalar macro: a case passes when all,
-- any or more than half of its attempts passed (rules/attempts.py).
-- grain:   one value
-- inputs:  n_passed (attempts that passed), attempts (attempts of the case),
--          attempts_passed ('all' | 'any' | 'majority')
-- returns: boolean; null when a count is null
create or replace macro case_passed(n_passed, attempts, attempts_passed) as
    case attempts_passed
        when 'any' then n_passed >= 1
        when 'majority' then n_passed * 2 > attempts
        else n_passed = attempts
    end;
