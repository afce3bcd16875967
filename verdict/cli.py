"""The command-line pieces both tools share (click types): a number option is a finite number in its range;
a file option says whether the command reads or writes it, so an output never replaces an input.

click's own ``FloatRange`` lets ``nan`` through every bound (no comparison with NaN is true) and
``inf`` through an open one; :class:`Float` refuses both, so ``--timeout nan`` is one line at
parse time, not a traceback or a silently infinite wait later.
"""

from __future__ import annotations

import functools
import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click


class Float(click.FloatRange):
    """A finite float in ``[min, max]`` (``min_open`` / ``max_open`` exclude a bound)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)


def port() -> click.IntRange:
    """A TCP port number, 1 to 65535."""
    return click.IntRange(1, 65535)


# -- files a command reads and writes ---------------------------------------------------------------
# A parameter's type says what its value is to the command: a file it reads (:class:`InputFile`),
# a directory whose files it reads (:class:`InputTree`), a file it writes (:class:`OutputFile`).
# :func:`path_clash` reads those roles off a parsed command and refuses an output that would
# destroy an input, or that another output of the same command would overwrite.


class InputFile(click.Path):
    """A file the command reads (``exists`` is checked by the reader, which says so in one line)."""

    def __init__(self, **attrs: Any) -> None:
        attrs.setdefault("dir_okay", False)
        attrs.setdefault("path_type", Path)
        super().__init__(**attrs)

    def input_paths(self, value: Any) -> list[Path]:
        return [Path(value)]


class InputTree(click.ParamType):
    """A directory (or one file) the command reads, given by name or path: :meth:`locate` finds it,
    :meth:`reads` says which files under it the command reads (an output may be written beside
    them, never over one)."""

    name = "directory"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value

    def locate(self, value: Any) -> Path | None:
        path = Path(value)
        return path if path.exists() else None

    def reads(self, relative: Path) -> bool:
        return True

    def input_paths(self, value: Any) -> list[Path]:
        where = self.locate(value)
        return [where] if where is not None and not where.is_dir() else []


class OutputFile(click.Path):
    """A file the command writes. ``updates``: the command reads it first and writes it again on
    purpose (an appended catalog file), so it may be an input too."""

    def __init__(self, *, updates: bool = False, **attrs: Any) -> None:
        attrs.setdefault("dir_okay", False)
        attrs.setdefault("path_type", Path)
        super().__init__(**attrs)
        self.updates = updates


@dataclass(frozen=True)
class _Named:
    label: str  # the option or argument as the user wrote it: --output, RESULT
    path: Path


def _label(param: click.Parameter) -> str:
    opts = [o for o in param.opts if o.startswith("--")] or param.opts
    return opts[0] if opts and opts[0].startswith("-") else param.human_readable_name


def _values(value: Any) -> list[Any]:
    if value is None:
        return []
    return [v for v in value if v is not None] if isinstance(value, (list, tuple)) else [value]


def _same(a: Path, b: Path) -> bool:
    """``a`` and ``b`` name one file: the same path once links are followed, or one inode."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _written_through(path: Path) -> bool:
    """An existing device, FIFO or socket (after links): written as given, never replaced, so two
    outputs or an output and an input naming it destroy nothing (``/dev/null``, ``/dev/stdout``)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _inside(path: Path, root: Path) -> Path | None:
    """``path`` relative to the directory ``root``, links followed, or None when it is outside."""
    real, top = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    try:
        return real.relative_to(top)
    except ValueError:
        return None


def path_clash(ctx: click.Context) -> str | None:
    """Why the parsed command ``ctx`` must not run, or None: an output that is one of its inputs
    (the baseline a diff was given, a result being rendered), one of the files an input directory
    holds (a catalog's setup SQL), or the same file as another output (the last would silently win).
    Devices and pipes are left out: they are written through, nothing is replaced."""
    inputs: list[_Named] = []
    trees: list[tuple[_Named, InputTree]] = []
    outputs: list[tuple[_Named, OutputFile]] = []
    for param in ctx.command.params:
        kind = param.type
        for value in _values(ctx.params.get(param.name or "")):
            named = _label(param)
            if isinstance(kind, OutputFile):
                outputs.append((_Named(named, Path(value)), kind))
                continue
            if isinstance(kind, InputTree) and (root := kind.locate(value)) is not None and root.is_dir():
                trees.append((_Named(named, root), kind))
            paths = getattr(kind, "input_paths", None)
            if paths is not None:
                inputs.extend(_Named(named, p) for p in paths(value))
    outputs = [(o, k) for o, k in outputs if not _written_through(o.path)]
    for i, (out, kind) in enumerate(outputs):
        for other, _ in outputs[:i]:
            if _same(out.path, other.path):
                return f"{other.label} and {out.label} name the same file {out.path}: give each output its own file"
        if kind.updates:
            continue
        for given in inputs:
            if _same(out.path, given.path):
                return (
                    f"{out.label} {out.path} is {given.label}, which this command reads: "
                    "write the output to another file"
                )
        for tree, tkind in trees:
            relative = _inside(out.path, tree.path)
            if relative is not None and tkind.reads(relative):
                return (
                    f"{out.label} {out.path} is a file of {tree.label} {tree.path}, which this command "
                    "reads: write the output outside it"
                )
    return None


def guard_paths(group: click.Group, refuse: Callable[[str], BaseException]) -> None:
    """Make every command of ``group`` (and of its subgroups) check :func:`path_clash` after its
    options are parsed and before it does anything: a clash is raised as ``refuse(message)``."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            guard_paths(command, refuse)
        elif command.callback is not None and not getattr(command.callback, "_paths_guarded", False):
            command.callback = _guarded(command.callback, refuse)


def _guarded(callback: Callable[..., Any], refuse: Callable[[str], BaseException]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        clash = path_clash(click.get_current_context())
        if clash is not None:
            raise refuse(clash)
        return callback(*args, **kwargs)

    run._paths_guarded = True  # type: ignore[attr-defined]
    return run
