"""The profiles' sections of the result as tables: Alpine preflight, Hugging Face cold fill and clients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from httpbench.report.format import Table, _f, _ms, _x


def profile_tables(name: str, section: dict[str, Any]) -> list[Table]:
    """Extra result tables rendered from a profile's JSON section (none for an unknown profile)."""
    render = PROFILE_TABLES.get(name)
    return render(section) if render else []


def alpine_tables(section: dict[str, Any]) -> list[Table]:
    """``--profile alpine``: the preflight per target (index records, signature, key, package identity)."""
    pre = section.get("preflight") or {}
    targets = pre.get("targets") or {}
    if not targets:
        return []
    rows = []
    for name, t in targets.items():
        ident = t.get("package_identity") or "-"
        if t.get("package_identity_matches") is False:
            ident += " (not the package's)"
        rows.append(
            [
                name,
                str(t.get("records", "-")),
                f"{t.get('signature_algorithm', '-')} ({t.get('signature_digest', '?')})",
                t.get("key_name") or "-",
                ident,
                "yes" if t.get("verified") else "no",
            ]
        )
    return [
        ("Alpine preflight", ["Target", "Index records", "Signature", "Key", "Package C:", "Verified"], rows)
    ]


def huggingface_tables(section: dict[str, Any]) -> list[Table]:
    """``--profile huggingface``: the cold fill and the real huggingface_hub client rounds."""
    phases = section.get("phases") or {}
    out = []
    if phases.get("cold_fill"):
        out.append(_cold_table(phases["cold_fill"]))
    if phases.get("clients"):
        out.append(_hf_client_table(phases["clients"]))
    if phases.get("model_clients"):
        out.append(_model_client_table(phases["model_clients"]))
    return out


def _cold_table(cold: dict[str, Any]) -> Table:
    headers = [
        "Target",
        "Samples",
        "Median total",
        "Median TTFB",
        "Median MiB/s",
        "Throughput ratio",
        "Upstream per repo (resolve/body)",
        f"{cold['concurrency']} concurrent misses",
    ]
    rows = []
    for name, s in cold["summary"].items():
        ups = (
            "—"
            if s["upstream_body_per_repo"] is None
            else f"{s['upstream_resolve_per_repo']}/{s['upstream_body_per_repo']}"
        )
        c = s["concurrent"]
        conc = (
            "—"
            if c is None
            else (
                f"{c['ok']}/{c['requests']} ok, max {_ms(c['max_ms'], grouped=True)}"
                + (
                    ""
                    if c["upstream_body"] is None
                    else f", upstream {c['upstream_resolve']}/{c['upstream_body']}"
                )
            )
        )
        cmp = cold["comparisons"].get(name)
        rows.append(
            [
                name,
                f"{s['ok']}/{s['samples']}",
                _ms(s["median_total_ms"], grouped=True),
                _ms(s["median_ttfb_ms"], grouped=True),
                _f(s["median_mibps"]),
                "—" if cmp is None else _x(cmp["throughput_ratio"]),
                ups,
                conc,
            ]
        )
    return ("Cold fill (fresh repository per sample, alternating order)", headers, rows)


def _hf_client_table(clients: dict[str, Any]) -> Table:
    headers = ["Client", "Target", "Timed", "OK", "p50", "p95", "p95 ratio", "Process p50"]
    rows = []
    for client, data in clients["clients"].items():
        for name, s in data["summary"].items():
            cmp = data["comparisons"].get(name)
            rows.append(
                [
                    client,
                    name,
                    s["timed"],
                    f"{s['ok']}/{s['samples']}",
                    _ms(s["p50_ms"], grouped=True),
                    _ms(s["p95_ms"], grouped=True),
                    "—" if cmp is None else _x(cmp["p95_ratio"]),
                    _ms(s["process_p50_ms"], grouped=True),
                ]
            )
    return ("Hugging Face client (one subprocess per sample, fresh HF_HOME)", headers, rows)


def _model_client_table(section: dict[str, Any]) -> Table:
    """Transformers and Diffusers per client line and target: times, the verdict, and the requests
    the fixture answered per sample (through a cache: what it asked the upstream for)."""
    headers = ["Line", "Client", "Target", "OK", "p50", "p95", "p95 ratio", "Verdict", "Fixture requests"]
    rows = []
    for line, data in section["lines"].items():
        versions = data.get("versions") or {}
        for client, per in data["clients"].items():
            label = f"{client} {versions.get(client, '?')} (hub {versions.get('huggingface_hub', '?')})"
            for name, s in per["summary"].items():
                cmp = per["comparisons"].get(name)
                counts = s.get("fixture_requests")
                rows.append(
                    [
                        line,
                        label,
                        name,
                        f"{s['ok']}/{s['samples']}"
                        + (f" ({_short(s['errors'][0])})" if s.get("errors") else ""),
                        _ms(s["p50_ms"], grouped=True),
                        _ms(s["p95_ms"], grouped=True),
                        "—" if cmp is None else _x(cmp["p95_ratio"]),
                        "—" if cmp is None else cmp["verdict"],
                        "—" if counts is None else " ".join(str(c) for c in counts),
                    ]
                )
    title = (
        "Model clients (Transformers: config, tokenizer, model, forward; Diffusers: pipeline, one 32x32 step)"
    )
    return (title, headers, rows)


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


PROFILE_TABLES: dict[str, Callable[[dict[str, Any]], list[Table]]] = {
    "alpine": alpine_tables,
    "huggingface": huggingface_tables,
}
