"""httpbench's output, for every command: the result tables (summary with ratios, per-target detail,
per-round, open loop, self-control), the optional sections' tables (real-client rounds, the
profiles' own: Alpine preflight, Hugging Face cold fill and clients), the JSON writer, JUnit and the
GitHub step summary. Measuring modules never format; everything here renders the result document.

Modules: :mod:`~httpbench.report.format` (shared formatters), :mod:`~httpbench.report.tables`
(result tables), :mod:`~httpbench.report.profiles` (profile sections), :mod:`~httpbench.report.jsonfile`
(JSON), :mod:`~httpbench.report.verdicts` (JUnit, GitHub step summary)."""

from __future__ import annotations

from httpbench.report.format import Table
from httpbench.report.format import _by_metric as _by_metric
from httpbench.report.format import _f as _f
from httpbench.report.format import _iv as _iv
from httpbench.report.format import _ms as _ms
from httpbench.report.format import _rt as _rt
from httpbench.report.format import _x as _x
from httpbench.report.jsonfile import dumps, write_json
from httpbench.report.profiles import PROFILE_TABLES, alpine_tables, huggingface_tables, profile_tables
from httpbench.report.profiles import _cold_table as _cold_table
from httpbench.report.profiles import _hf_client_table as _hf_client_table
from httpbench.report.tables import _VERDICT_WORDS as _VERDICT_WORDS
from httpbench.report.tables import _footer as _footer
from httpbench.report.tables import _open_loop as _open_loop
from httpbench.report.tables import _paired_summary as _paired_summary
from httpbench.report.tables import _per_round as _per_round
from httpbench.report.tables import _self_control as _self_control
from httpbench.report.tables import client_tables, extra_tables, tables
from httpbench.report.verdicts import _MARK as _MARK
from httpbench.report.verdicts import github_summary, junit_xml, verdict_cases

__all__ = [
    "PROFILE_TABLES",
    "Table",
    "alpine_tables",
    "client_tables",
    "dumps",
    "extra_tables",
    "github_summary",
    "huggingface_tables",
    "junit_xml",
    "profile_tables",
    "tables",
    "verdict_cases",
    "write_json",
]
