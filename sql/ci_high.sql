-- ci_high(value, se) — scalar macro: upper end of the 95 % interval, value + z · se
-- (rules/intervals.py).
-- grain:   one value
-- inputs:  value, se (a standard error)
-- returns: double; null when value or se is null
create or replace macro ci_high(value, se) as
    ci_low(value, -se);
