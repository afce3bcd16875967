"""The ``dbbench`` command: a thin layer over the library. A command parses its options (into a
typed options object where they are many: ``DiffOptions``, ``GrowOptions``, ``SaveOptions``), makes
one call of :mod:`dbbench.workflow` (or of the module it names), prints and writes what it returns.

The group and what the commands share (the one error handler, the one output writer) live in
:mod:`dbbench.cli.app`; the commands by concern in
:mod:`~dbbench.cli.local_servers` (``servers``), :mod:`~dbbench.cli.commands` (``info``, ``seed``,
``validate``, ``report``), :mod:`~dbbench.cli.measure` (``explain``, ``check``),
:mod:`~dbbench.cli.baseline` (``baseline save``, ``diff``), :mod:`~dbbench.cli.grow` (``grow``), :mod:`~dbbench.cli.volume` (``init``, ``fill``) and
:mod:`~dbbench.cli.bench` (``bench``). They are registered on the group here."""

from __future__ import annotations

from dbbench.cli.advise import advise_cmd
from dbbench.cli.app import Cli, _connect, cli, err, say
from dbbench.cli.baseline import baseline_group, baseline_save, diff_cmd
from dbbench.cli.bench import bench_group, bench_seed_cmd
from dbbench.cli.capture import capture_cmd, catalog_group
from dbbench.cli.commands import info, report_cmd, seed_cmd, validate_cmd
from dbbench.cli.grow import grow_cmd
from dbbench.cli.indexes import indexes_cmd
from dbbench.cli.local_servers import (
    _print_status,
    _which,
    servers_down,
    servers_group,
    servers_status,
    servers_up,
)
from dbbench.cli.measure import check_cmd, explain_cmd
from dbbench.cli.volume import fill_cmd, init_cmd
from dbbench.errors import DbbenchError
from verdict.cli import guard_paths

__all__ = [
    "Cli",
    "_connect",
    "_print_status",
    "_which",
    "advise_cmd",
    "baseline_group",
    "baseline_save",
    "bench_group",
    "bench_seed_cmd",
    "capture_cmd",
    "catalog_group",
    "check_cmd",
    "cli",
    "diff_cmd",
    "err",
    "explain_cmd",
    "fill_cmd",
    "grow_cmd",
    "indexes_cmd",
    "info",
    "init_cmd",
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
    advise_cmd,
    indexes_cmd,
    baseline_group,
    diff_cmd,
    grow_cmd,
    report_cmd,
    bench_group,
    capture_cmd,
    catalog_group,
    init_cmd,
    fill_cmd,
):
    cli.add_command(_command)
guard_paths(cli, DbbenchError)  # an output never replaces an input, nor another output


def main() -> None:
    cli(prog_name="dbbench")
