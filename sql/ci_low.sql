-- ci_low(value, se) — scalar macro: lower end of the 95 % interval, value − z · se
-- (rules/intervals.py).
-- grain:   one value
-- inputs:  value, se (a standard error)
-- returns: double; null when value or se is null
create or replace macro ci_low(value, se) as
    cast(value as double) - 1.96 * cast(se as double);
