"""A catalog's own data spec (``DIR/data/spec.toml``), where the commands that build a catalog's
namespace use it: ``dbbench seed --catalog DIR`` and ``dbbench grow --catalog DIR`` run the setup
SQL, then fill the spec (:func:`after_setup`); ``dbbench check --catalog DIR`` fills it small
(:func:`check_scale`); ``dbbench validate --catalog DIR`` reads it (:func:`of_catalog`); and the
measuring commands warn when the namespace was filled from another version of it (:func:`stale`).

The spec is read before anything is touched, so a bad spec is refused with the catalog's other
problems, every one at once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dbbench import defaults
from dbbench.volume import recipe
from dbbench.volume.load import FillResult, Progress, fill
from dbbench.volume.spec import SPEC_FILE, Spec, SpecError, read

CHECK_SCALE = 1_000  # `dbbench check`'s :scale, unless the spec's `check_scale` says


def spec_file(catalog: Any) -> Path:
    """Where a catalog's spec is: ``data/spec.toml`` in its directory (``catalog``: a
    :class:`~dbbench.catalog.entries.Catalog`, or its directory or one of its entry files)."""
    path = Path(getattr(catalog, "path", catalog))
    return (path if path.is_dir() else path.parent) / SPEC_FILE


def of_catalog(catalog: Any, scales: Iterable[int | None] = ()) -> Spec | None:
    """The catalog's spec, read and checked (:class:`~dbbench.volume.spec.SpecError`), or None when
    it has none. Checked as the run checks it (:func:`checked`), at its own scale, its check scale
    and each of ``scales`` (None: the spec's own)."""
    file = spec_file(catalog)
    if not os.path.lexists(file):
        return None
    return checked(read(file, root=file.parent.parent), scales)


def run_scale(spec: Spec, scale: int | None = None) -> int:
    """The :scale a fill of ``spec`` runs at: ``scale``, else the spec's, else the default."""
    return scale if scale is not None else spec.scale or defaults.SCALE


def checked(spec: Spec, scales: Iterable[int | None] = ()) -> Spec:
    """``spec`` with its recipe built without a server (:func:`dbbench.volume.recipe.check`, the code
    the fill prepares with) at its own scale, its check scale and each of ``scales``: every problem
    that does not depend on the live schema, at once (those of the first scale that has any),
    before anything is touched."""
    for scale in dict.fromkeys([run_scale(spec), check_scale(spec), *(run_scale(spec, s) for s in scales)]):
        recipe.check(spec, scale)
    return spec


def check_scale(spec: Spec) -> int:
    """The :scale ``dbbench check`` fills the spec at: its ``check_scale``, else :data:`CHECK_SCALE`
    (at most the spec's own scale)."""
    if spec.check_scale is not None:
        return spec.check_scale
    return min(CHECK_SCALE, spec.scale or CHECK_SCALE)


def after_setup(
    targets: list,
    namespace: str,
    spec: Spec,
    setup: list,
    *,
    scale: int | None = None,
    isolate: bool = True,
    progress: Progress | None = None,
) -> list[FillResult]:
    """Fill ``spec`` into the namespace the catalog's setup SQL just built (``setup``: its results,
    one per target, in the targets' order). The fill counts and fingerprints every table again:
    its rows and fingerprints replace the setup's, and its steps join the setup's (``fill …``)."""
    filled = fill(targets, namespace, spec, scale=scale, isolate=isolate, progress=progress)
    for r, f in zip(setup, filled, strict=True):
        r.rows, r.fingerprints = dict(f.rows), dict(f.fingerprints)
        r.seconds.update({f"fill {k}": v for k, v in f.seconds.items()})
    return filled


def stale(catalog: Any, metas: dict[str, dict], namespace: str | None = None) -> list[str]:
    """Warnings for namespaces not filled from the catalog's current spec: the spec changed since
    (its SHA-256 in the namespace's marker differs), or the namespace was never filled from it."""
    file = spec_file(catalog)
    if not file.is_file():
        return []
    try:
        current = read(file).sha256
    except SpecError:  # a broken spec is reported by the commands that read it
        return []
    where = f" --namespace {namespace}" if namespace else ""
    out = []
    for dialect, meta in metas.items():
        filled = meta.get("volume.spec_sha256")
        if filled == current or not meta:
            continue
        why = "differs from the spec the namespace was filled from" if filled else "was not filled into it"
        out.append(
            f"{dialect}: {file} {why}; run `dbbench seed --catalog {file.parent.parent}{where}` to fill it"
        )
    return out
