"""Hypothesis strategies for the DuckDB engine: random datasets under *flat* configs.

Reuses the scenarios of tests/strategies.py (read-only here): the `flat` family (no
`evaluators` list: every evaluator in the data counts, expected per run), the
`connexity` family (eight listed evaluators, required flags, min scores, root
safety_gate with required_children) and those `tree` draws that came out flat (a few
listed leaves, data rows of unlisted evaluators that are ignored).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.strategies import Scenario, scenarios


def is_flat(config: dict[str, Any]) -> bool:
    """No composite node: no entry of `evaluators` has children."""
    return not any("children" in entry for entry in (config.get("evaluators") or {}).values())


def flat_scenarios() -> st.SearchStrategy[Scenario]:
    """Random scenarios whose config is flat, from the three families."""
    return st.one_of(
        scenarios("flat"),
        scenarios("connexity"),
        scenarios("tree").filter(lambda sc: is_flat(sc.config)),
    )


@st.composite
def shuffles(draw, sc: Scenario) -> dict[str, list[int]]:
    """A row permutation for every table of the scenario."""
    order: dict[str, list[int]] = {}
    for name, rows in sc.tables().items():
        if rows:
            order[name] = draw(st.permutations(range(len(rows))))
    return order
