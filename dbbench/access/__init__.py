"""Reaching a server, and as whom: database URLs (parsing, redaction), version-checked targets, and the namespace's own role (isolation)."""
