-- mde(se) — scalar macro: the minimum detectable effect at α 0.05 (two-sided) and power
-- 0.8 of a difference with standard error se (rules/intervals.py, SPEC §10).
-- grain:   one value
-- inputs:  se (a standard error)
-- returns: double; null when se is null
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro mde(se) as
    (se * cast(2.801585 as double));
