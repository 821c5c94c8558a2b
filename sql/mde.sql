-- mde(se) — scalar macro: the minimum detectable effect at α 0.05 (two-sided) and power
-- 0.8 of a difference with standard error se (rules/intervals.py).
-- grain:   one value
-- inputs:  se (a standard error)
-- returns: double; null when se is null
create or replace macro mde(se) as
    2.801585 * cast(se as double);
