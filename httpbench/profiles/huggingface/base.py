"""What the phases after the warm rounds (cold fill, client rounds) read from the profile."""

from __future__ import annotations

from typing import Any, Protocol


class ModelProfile(Protocol):
    """The model under test as the ``huggingface`` profile resolved it (see ``HuggingFaceProfile``)."""

    values: dict[str, Any]
    repo: str
    revision: str
    file: str
    sha256: str
    size: int | None
    run_token: str

    def file_path(self, repo: str | None = None) -> str: ...
