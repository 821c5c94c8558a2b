"""Charts of evalframe's result tables and the HTML report: each chart function takes one
table (polars DataFrame or LazyFrame) and returns an Altair chart (docs/report.md)."""

from evalframe._private.report.html import build_report, top_regressions, write_report
from evalframe._private.report.plots import (
    chart_note,
    charts_for,
    evaluator_delta_heatmap,
    kappa_curve_chart,
    pass_rate_chart,
    power_curve_chart,
    regression_waterfall_chart,
    score_distribution_chart,
    slice_forest_chart,
    sweep_heatmap,
    threshold_curve_chart,
    to_svg,
    trend_chart,
    verdict_chart,
)
from evalframe._private.report.tables import report_tables
from evalframe._private.store.result_sets import check_report_path

__all__ = [
    "build_report",
    "chart_note",
    "charts_for",
    "check_report_path",
    "evaluator_delta_heatmap",
    "kappa_curve_chart",
    "pass_rate_chart",
    "power_curve_chart",
    "regression_waterfall_chart",
    "report_tables",
    "score_distribution_chart",
    "slice_forest_chart",
    "sweep_heatmap",
    "threshold_curve_chart",
    "to_svg",
    "top_regressions",
    "trend_chart",
    "verdict_chart",
    "write_report",
]
