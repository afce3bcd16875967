"""Volume for a team's own schema: data specs, generated once and bulk-loaded into both servers.

A data spec (TOML, ``data/spec.toml`` in a catalog directory; see ``docs/volume.md``) gives each
table a row count (a number or an expression of ``:scale``) and each column a generator
(:mod:`dbbench.volume.generators`, a registry a team can extend). :func:`fill` makes the rows once
and streams them into ``COPY`` / ``LOAD DATA LOCAL`` on every target, into tables a catalog's setup
SQL created in a namespace dbbench owns; :func:`starter` writes a spec from a live schema
(``dbbench init``).

The stage's modules: :mod:`~dbbench.volume.spec` (the model and its TOML),
:mod:`~dbbench.volume.expr` (``:scale`` expressions), :mod:`~dbbench.volume.generators` and
:mod:`~dbbench.volume.sampling` (values), :mod:`~dbbench.volume.schema` (a live schema),
:mod:`~dbbench.volume.recipe` (order, cycles, chunks), :mod:`~dbbench.volume.load` (the fill) and
:mod:`~dbbench.volume.starter` (the starter spec).
"""

from __future__ import annotations

from dbbench.volume.load import FillFailed, FillResult, fill, load_spec
from dbbench.volume.spec import SPEC_FILE, Spec, SpecError, read

__all__ = ["SPEC_FILE", "FillFailed", "FillResult", "Spec", "SpecError", "fill", "load_spec", "read"]
