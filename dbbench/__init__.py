"""dbbench: index-regression checks for SQL query catalogs on PostgreSQL and MySQL.

The library is the product; the ``dbbench`` command is a thin layer over it:

=====================================  ==============================================================
command                                library (:mod:`dbbench.workflow`, one call per command)
=====================================  ==============================================================
``dbbench servers up|down|status``     ``dbbench.workflow.local.up(…)`` / ``down`` / ``status``
``dbbench info``                       ``dbbench.workflow.info(connect)``
``dbbench validate --catalog DIR``     ``dbbench.workflow.validate(DIR, namespace)``
``dbbench seed``                       ``dbbench.workflow.seed_dataset(targets, dataset, namespace=…)``
                                       (``dbbench.dataset.seed.seed`` and the verification)
``dbbench seed --catalog DIR``         ``dbbench.workflow.seed_catalog(targets, DIR, namespace=…)``
``dbbench init``                       ``dbbench.workflow.init(connect, namespace)`` (a starter data spec)
``dbbench fill``                       ``dbbench.workflow.fill(connect, spec, root, namespace, …)``
``dbbench explain``                    ``dbbench.workflow.measure(connect, Run(…))``: ``explain.run`` then
                                       ``dbbench.document.build.explain_document(…)`` (the result document)
``dbbench check``                      ``dbbench.workflow.check(connect, Run(…), dataset=…)``
``dbbench baseline save FILE``         ``dbbench.workflow.save_baseline(connect, FILE, Run(…) or RESULT)``
                                       (``dbbench.document.baseline.save(FILE, doc)``)
``dbbench diff BASELINE [RESULT]``     ``dbbench.workflow.diff(connect, Comparison(BASELINE, RESULT, …))``
                                       (``dbbench.diff.compare(base_doc, result_doc, Thresholds(…))``)
``dbbench grow``                       ``dbbench.workflow.grow(connect, catalog, LadderOptions(…))``
                                       (``dbbench.measure.grow.run_ladder`` then ``….build.grow_document``)
``dbbench capture``                    ``dbbench.workflow.capture_shapes(connect, namespace, catalog=…)``
``dbbench catalog propose|accept``     ``dbbench.workflow.propose(connect, DIR, namespace)`` / ``accept(…)``
``dbbench bench seed``                 ``dbbench.workflow.local.bench_seed(connect, dataset, …)``
``dbbench report RESULT``              ``dbbench.output.explain.markdown(doc)`` / ``output.html.html(doc)``
``--junit`` / ``--github-summary``     ``dbbench.output.explain.junit_xml(doc)`` / ``….github_summary(doc)``
(render anything)                      ``dbbench.output`` (every renderer of a document; the stages never format)
(write an output file)                 ``dbbench.cli.app.write_file`` (``verdict.files.write_output``)
(defaults: warm-ups, runs, timeout…)   ``dbbench.defaults``
(read a result or baseline file)       ``dbbench.document.store.load_document(path)`` (typed:
                                       ``dbbench.document.model.Document``) / ``store.load(path)`` (a dict)
(a DAO test)                           ``dbbench.assert_plan(conn, sql, params, uses_index=…)``;
                                       fixtures in ``dbbench.pytest_plugin``
=====================================  ==============================================================
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dbbench.defaults import VERSION as __version__

# The public names are imported on first use, so that ``import dbbench`` (and the command's start)
# does not load SQLAlchemy and both drivers before it needs them.
_EXPORTS = {
    "DbbenchError": "dbbench.errors",
    "PlanAssertionError": "dbbench.measure.assertions",
    "assert_plan": "dbbench.measure.assertions",
    "Target": "dbbench.access.targets",
    "connect": "dbbench.access.targets",
}

__all__ = ["DbbenchError", "PlanAssertionError", "Target", "__version__", "assert_plan", "connect"]

if TYPE_CHECKING:
    from dbbench.access.targets import Target, connect
    from dbbench.errors import DbbenchError
    from dbbench.measure.assertions import PlanAssertionError, assert_plan


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dbbench' has no attribute {name!r}")
