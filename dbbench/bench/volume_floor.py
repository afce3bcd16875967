"""The bulk-load floor of a data spec: the servers loading the spec's rows, made beforehand.

The rows of the recipe are made and encoded once into files (not timed); then the same loaders as
``dbbench fill`` (:func:`dbbench.volume.load.run_streams`: empty the tables, ``COPY`` / ``LOAD
DATA LOCAL`` each stream, the deferred foreign keys, commit), both servers at once, read the
files instead of the generator. The fill's ``generate+load`` against this wall is what making the
rows costs on top of the servers' own work.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path

from dbbench.access.targets import Target
from dbbench.volume import load
from dbbench.volume.recipe import Recipe

CHUNK = 1 << 20


def write_files(p: Recipe, targets: list[Target], folder: Path) -> list[list[Path]]:
    """The recipe's streams as bulk-load files, per target: ``folder/STREAM.DIALECT.tsv``."""
    names = [t.dialect for t in targets]
    files: list[list[Path]] = [[] for _ in targets]
    handles = None
    k = 0
    for data in load.encoded(p, names, load.CHUNK_ROWS, lambda *_: None):
        if handles is None:
            paths = [folder / f"{k:02d}.{d}.tsv" for d in names]
            handles = [path.open("wb") for path in paths]
            for i, path in enumerate(paths):
                files[i].append(path)
        if data is None:
            for h in handles:
                h.close()
            handles, k = None, k + 1
            continue
        for h, chunk in zip(handles, data):
            h.write(chunk)
    return files


def floor(
    p: Recipe, targets: list[Target], namespace: str, files: list[list[Path]], isolate: bool = True
) -> list[float]:
    """Seconds each target takes to load the files (all at once), through the fill's own loaders."""

    inboxes: list[queue.Queue] = [queue.Queue(load.QUEUE_CHUNKS) for _ in targets]

    def produce(_: object, stop: threading.Event) -> None:
        for box, paths in zip(inboxes, files):  # one feeder per target: the files are read ahead
            threading.Thread(target=_feed, args=(box, paths, stop), daemon=True).start()

    seconds = load.run_streams(p, targets, namespace, isolate, load.CHUNK_ROWS, produce, inboxes)
    return [s["generate+load"] for s in seconds]


def _feed(box: queue.Queue, paths: list[Path], stop: threading.Event) -> None:
    for path in paths:
        with path.open("rb") as fh:
            while chunk := fh.read(CHUNK):
                if stop.is_set():
                    return
                box.put(chunk)
        box.put(None)
