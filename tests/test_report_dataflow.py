"""report_tables on a dataset path (compare by the flat pass, evaluator_deltas from its
leaf scores, the embedded cases' nodes evaluated on their own rows) equals report_tables
on the loaded Dataset (the tree path throughout), table for table."""

from __future__ import annotations

import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe._private.report.tables import report_tables


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["connexity", "default"])
def test_report_tables_from_a_path_equal_the_tree_path(tmp_path, preset):
    ef.write_demo(tmp_path / "d", n_cases=40)
    cfg = ef.load_config(None, preset=preset)
    fast = report_tables(tmp_path / "d", cfg)
    slow = report_tables(ef.load_dataset(tmp_path / "d"), cfg)
    assert fast.keys() == slow.keys()
    for name in fast:
        assert_frame_equal(fast[name], slow[name], check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
