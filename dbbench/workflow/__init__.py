"""The commands as library calls: each ``dbbench`` command is one call here, and the command line
(and the pytest plugin) only parses options, calls, prints what the call returned and writes its
document (built in :mod:`dbbench.document`). The calls live in one module per family of commands:

* :mod:`~dbbench.workflow.connect`: what they share (``connect``, the callbacks);
* :mod:`~dbbench.workflow.seed`: ``seed`` (a dataset, or a catalog's setup SQL and data spec);
* :mod:`~dbbench.workflow.volume`: ``info``, ``init``, ``fill`` and ``validate``;
* :mod:`~dbbench.workflow.runs`: ``explain``, ``check``, ``diff``, ``baseline save``, ``grow``.
* :mod:`~dbbench.workflow.capture`: ``capture``, ``catalog propose`` / ``accept``, and what the
  pytest plugin does (its targets, its namespace, its ``--dbbench-capture``).

The calls that connect take ``connect``, a factory of an opened-targets context manager
(:func:`opened` bound to the URLs given), so that the catalog is read before any connection and a
command that connects twice (``check``: seed, then measure) disposes in between.
"""

from dbbench.workflow.capture import (
    Captured,
    accept,
    build_namespace,
    capture_shapes,
    captured,
    check_captured,
    namespace_engine,
    propose,
    reset_statistics,
    start_recording,
    target_error,
    target_url,
)
from dbbench.workflow.connect import Connect, ProgressFactory, Warn, opened
from dbbench.workflow.runs import (
    BaselineRefused,
    Comparison,
    NothingToCompare,
    Run,
    SavedBaseline,
    ScratchDatasetFailed,
    check,
    check_against,
    compare_files,
    diff,
    grow,
    measure,
    save_baseline,
    stability,
)
from dbbench.workflow.seed import DatasetUnverified, Seeded, SetUp, dataset_rows, seed_catalog, seed_dataset
from dbbench.workflow.volume import fill, info, init, require_filled, starter_dialect, validate

__all__ = [
    "BaselineRefused",
    "Captured",
    "Comparison",
    "Connect",
    "DatasetUnverified",
    "NothingToCompare",
    "ProgressFactory",
    "Run",
    "SavedBaseline",
    "ScratchDatasetFailed",
    "Seeded",
    "SetUp",
    "Warn",
    "accept",
    "build_namespace",
    "capture_shapes",
    "captured",
    "check",
    "check_against",
    "check_captured",
    "compare_files",
    "dataset_rows",
    "diff",
    "fill",
    "grow",
    "info",
    "init",
    "measure",
    "namespace_engine",
    "opened",
    "propose",
    "require_filled",
    "reset_statistics",
    "save_baseline",
    "seed_catalog",
    "seed_dataset",
    "stability",
    "start_recording",
    "starter_dialect",
    "target_error",
    "target_url",
    "validate",
]
