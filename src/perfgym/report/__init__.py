"""The HTML report: results files (and simulation files) -> one self-contained page.

    runs      results files read and checked, split into one run per (file, model)
    sections  the numbers: leaderboard, per-task table, staircase, stages, speedups, transitions
    charts    matplotlib charts as base64 PNG
    template  the inline jinja2 template and stylesheet
    writer    `write_report(results_paths, out, simulations=None)`

See docs/report.md. Needs the `report` extra (matplotlib, jinja2).
"""

from perfgym.report.writer import render_report, write_report

__all__ = ["render_report", "write_report"]
