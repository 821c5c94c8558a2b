-- exceeds(x, limit_value) — scalar macro: "x exceeds the limit", x > limit + EPS
-- (rules/boundaries.py).
-- grain:   one value
-- inputs:  x, limit_value (numbers: drops on 0–1, relative latency increases)
-- returns: boolean; null when x or limit_value is null
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro exceeds(x, limit_value) as
    (cast(x as double) > (cast(limit_value as double) + cast(1e-09 as double)));
