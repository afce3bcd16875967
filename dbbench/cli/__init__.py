"""The ``dbbench`` command: a thin layer over the library (every command maps to one call).

The group and what the commands share live in :mod:`dbbench.cli.app`; the commands by concern in
:mod:`~dbbench.cli.local_servers` (``servers``), :mod:`~dbbench.cli.commands` (``info``, ``seed``,
``validate``, ``report``), :mod:`~dbbench.cli.measure` (``explain``, ``check``),
:mod:`~dbbench.cli.baseline` (``baseline save``, ``diff``), :mod:`~dbbench.cli.grow` (``grow``) and
:mod:`~dbbench.cli.bench` (``bench``). They are registered on the group here."""

from __future__ import annotations

from dbbench.cli.app import Cli, _connect, cli, err, say
from dbbench.cli.baseline import baseline_group, baseline_save, diff_cmd
from dbbench.cli.bench import bench_group, bench_seed
from dbbench.cli.commands import info, report_cmd, seed_cmd, validate_cmd
from dbbench.cli.grow import grow_cmd
from dbbench.cli.local_servers import (
    _print_status,
    _which,
    servers_down,
    servers_group,
    servers_status,
    servers_up,
)
from dbbench.cli.measure import _emit, _measure, _write_json, check_cmd, explain_cmd

__all__ = [
    "Cli",
    "_connect",
    "_emit",
    "_measure",
    "_print_status",
    "_which",
    "_write_json",
    "baseline_group",
    "baseline_save",
    "bench_group",
    "bench_seed",
    "check_cmd",
    "cli",
    "diff_cmd",
    "err",
    "explain_cmd",
    "grow_cmd",
    "info",
    "main",
    "report_cmd",
    "say",
    "seed_cmd",
    "servers_down",
    "servers_group",
    "servers_status",
    "servers_up",
    "validate_cmd",
]

for _command in (
    servers_group,
    info,
    seed_cmd,
    validate_cmd,
    explain_cmd,
    check_cmd,
    baseline_group,
    diff_cmd,
    grow_cmd,
    report_cmd,
    bench_group,
):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="dbbench")
