"""Progress bars on stderr (rich), one per target, fed from the seeding threads."""

from __future__ import annotations

import contextlib
import threading

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)


def _bars(label: str, *after: ProgressColumn) -> Progress:
    """Bars on stderr: the ``label`` text column, the bar, done / total, then ``after``; transient
    unless stderr is a terminal."""
    console = Console(stderr=True)
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), *after)
    return Progress(*columns, console=console, transient=not console.is_terminal)


@contextlib.contextmanager
def seed_progress(targets, total: int):
    """The dataset's ``total`` rows loaded, one bar per target, with the step it is at."""
    bars = _bars("{task.fields[label]:<10}", TextColumn("{task.fields[step]}"), TimeElapsedColumn())
    lock = threading.Lock()
    with bars:
        tasks = {t.dialect: bars.add_task("", total=total, label=t.label, step="connecting") for t in targets}

        def update(dialect: str, step: str, rows: int) -> None:
            with lock:
                bars.update(tasks[dialect], advance=rows, step=step)

        yield update


@contextlib.contextmanager
def setup_progress(targets):
    """Bytes of the setup SQL read, one bar per target: checked first, then loaded."""
    from rich.progress import DownloadColumn, TaskID, TransferSpeedColumn

    console = Console(stderr=True)
    columns = (
        TextColumn("{task.fields[label]:<10}"),
        TextColumn("{task.fields[step]:<8}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeElapsedColumn(),
    )
    bars = Progress(*columns, console=console, disable=not console.is_terminal)
    lock = threading.Lock()
    labels = {t.dialect: t.label for t in targets}
    with bars:
        tasks: dict[str, tuple[TaskID, str]] = {}

        def update(dialect: str, step: str, advance: int, total: int) -> None:
            with lock:
                fields = {"label": labels.get(dialect, dialect), "step": step}
                if dialect not in tasks:
                    tasks[dialect] = (bars.add_task("", total=total, **fields), step)
                task, shown = tasks[dialect]
                if shown != step:
                    bars.reset(task, total=total, **fields)
                    tasks[dialect] = (task, step)
                bars.update(task, advance=advance)

        yield update


@contextlib.contextmanager
def explain_progress():
    """A spinner line naming the shape being measured."""
    console = Console(stderr=True)
    bars = Progress(TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True)
    with bars:
        task = bars.add_task("starting")

        def update(dialect: str, shape: str, spelling: str) -> None:
            bars.update(task, description=f"{dialect}: {shape} ({spelling})")

        yield update


@contextlib.contextmanager
def grow_progress(total: int):
    """One bar over the whole ladder (loads and measurements), with the time remaining."""
    from rich.progress import TimeRemainingColumn

    bars = _bars("{task.description:<60}", TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())
    with bars:
        task = bars.add_task("starting", total=total)

        def update(message: str) -> None:
            bars.update(task, description=message[:60], advance=1)

        yield update
