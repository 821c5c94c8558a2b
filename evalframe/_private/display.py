"""The display rules' old home: they live in the public module evalframe/format.py now. The
names the report still imports from here, until it imports evalframe.format itself."""

from evalframe.format import (
    INVISIBLE,
    SHORT,
    VALUE,
    case_counts,
    has_paired_cases,
    num,
    p_value,
    pass_at_text,
    pass_k_values,
    pass_rate_delta,
    pct,
    policy_lines,
    reason_text,
    run_rate,
    visible,
    with_pass_k_cases,
)

__all__ = [
    "INVISIBLE",
    "SHORT",
    "VALUE",
    "case_counts",
    "has_paired_cases",
    "num",
    "p_value",
    "pass_at_text",
    "pass_k_values",
    "pass_rate_delta",
    "pct",
    "policy_lines",
    "reason_text",
    "run_rate",
    "visible",
    "with_pass_k_cases",
]
