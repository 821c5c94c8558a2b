-- exceeds(x, limit_value) — scalar macro: "x exceeds the limit", x > limit + EPS
-- (rules/boundaries.py).
-- grain:   one value
-- inputs:  x, limit_value (numbers: drops on 0–1, relative latency increases)
-- returns: boolean; null when x or limit_value is null
create or replace macro exceeds(x, limit_value) as
    cast(x as double) > cast(limit_value as double) + 1e-9;
