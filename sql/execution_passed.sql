-- execution_passed(is_ok, is_judge_error, verdict, outcomes_total, outcomes_passed,
--                  outcomes_mode) — scalar macro: passed under the outcomes mode ('gate',
-- 'ignore', 'both'); an errored execution or a judge error never passes
-- (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, is_judge_error (booleans), verdict (varchar), outcomes_total,
--          outcomes_passed (counts), outcomes_mode (varchar)
-- returns: boolean
create or replace macro execution_passed(
    is_ok,
    is_judge_error,
    verdict,
    outcomes_total,
    outcomes_passed,
    outcomes_mode
) as
    case
        when not is_ok or is_judge_error then false
        when outcomes_mode = 'gate'
            then case
                when outcomes_total > 0 then outcomes_passed = outcomes_total
                else verdict = 'pass'
            end
        when outcomes_mode = 'ignore' then verdict = 'pass'
        else verdict = 'pass' and (not outcomes_total > 0 or outcomes_passed = outcomes_total)
    end;
