"""``--profile huggingface``: a Hugging Face model proxy against a baseline (the Models protocol).

Warm scenarios (timed by the generic engine): ``model info GET`` and ``model info 304``
(``/api/models/{repo}/revision/{rev}``), ``model file HEAD``, ``model file GET`` and
``model file Range 64 KiB`` (``/{repo}/resolve/{rev}/{file}``).

Preflight, on every target before any timing:

* model info: ``sha`` is the pinned revision, ``id`` the repository, the file list is the expected
  one (``--expect-file``, else the baseline's) and holds ``--file``; the ETag it sends answers 304 to If-None-Match;
* file HEAD and GET: ``X-Repo-Commit`` = commit, ``X-Linked-Etag`` = the SHA-256, ``X-Linked-Size``
  and ``Content-Length`` = the size, the same ETag on HEAD and GET; the body's SHA-256 and size;
* Range ``bytes=0-65535``: 206, ``Content-Range: bytes 0-65535/<size>``, the exact slice (its digest
  then checks every timed Range answer; timed GET answers are checked by length, and by SHA-256 on
  the engine's sample of large bodies);
* leak checks on every answer: a ``Location`` to another host, any ``X-Xet-*`` header, a ``Link``
  with a Xet relation, or an ``--upstream-host`` value in any header or JSON body is an error.

After the warm rounds:

* **cold fill** (``--cold-samples``): each sample fetches the model file from a repository the
  target has never seen (``--cold-repo``, ``--cold-target``), targets alternating; total time, TTFB,
  MiB/s, status and SHA-256 per sample. One more sample sends ``--cold-concurrency`` simultaneous
  requests for one fresh repository. When the upstream fixture's ``/__stats`` is reachable
  (``--stats-url``, or ``/__stats`` at the target's origin) the upstream resolve and body fetches per
  fresh repository are recorded; a candidate with more than one body fetch per repository fails
  (no singleflight). Gate: candidate/baseline median MiB/s >= the ``cold`` gate (0.90x).
* **real clients** (``--hf-client``): ``hf_hub_download``, ``snapshot_download`` and ``hf download``,
  each sample a subprocess with ``HF_ENDPOINT`` = the target, a fresh ``HF_HOME``, telemetry and Xet
  off; the downloaded file's SHA-256 is verified. The API samples time the call itself (import
  excluded), the CLI sample the whole process. Gate: p95 ratio <= the ``client`` gate (1.25x).
"""

from __future__ import annotations

from httpbench.profiles.huggingface.cold import STATS_MAX_BYTES, ColdFill, ColdPlan
from httpbench.profiles.huggingface.hub_clients import CLIENTS, ClientRounds, client_argv, client_env
from httpbench.profiles.huggingface.leaks import leak
from httpbench.profiles.huggingface.profile import (
    DEFAULT_COLD_REPO,
    FILE_GET,
    FILE_HEAD,
    FILE_RANGE,
    INFO_304,
    INFO_GET,
    PROFILE,
    RANGE_BYTES,
    HuggingFaceProfile,
)

__all__ = [
    "CLIENTS",
    "DEFAULT_COLD_REPO",
    "FILE_GET",
    "FILE_HEAD",
    "FILE_RANGE",
    "INFO_304",
    "INFO_GET",
    "PROFILE",
    "RANGE_BYTES",
    "STATS_MAX_BYTES",
    "ClientRounds",
    "ColdFill",
    "ColdPlan",
    "HuggingFaceProfile",
    "client_argv",
    "client_env",
    "leak",
]
