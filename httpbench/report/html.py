"""A compare result as one self-contained HTML page (no scripts, no external files): the verdict
with its evidence, the preflight, per scenario the verdict with its interval and two small inline
SVG plots of the rounds (p50/p95/p99 response time and throughput per round, one colour per
target), and the profile's and the clients' tables."""

from __future__ import annotations

import html as _html
import math
import re
from typing import Any

from httpbench.report.format import _by_metric, _f, _iv, _x
from httpbench.report.tables import extra_tables

COLORS = ("#336791", "#d9822b", "#2e8540", "#8e44ad", "#b03a2e")
DASHES = {"p50_ms": "", "p95_ms": "5,3", "p99_ms": "1,3"}  # solid, dashed, dotted
VERDICT_COLORS = {"pass": "#2e8540", "fail": "#b00020", "inconclusive": "#b7791f"}
_W, _H, _LEFT, _RIGHT, _TOP, _BOTTOM = 540, 210, 56, 12, 22, 30
_STYLE = (
    "body{font-family:sans-serif;max-width:1180px;margin:2em auto;color:#222;font-size:14px}"
    "table{border-collapse:collapse;margin:.6em 0 1.2em}th,td{border:1px solid #ccc;padding:3px 7px;"
    "font-size:12.5px;text-align:left}th{background:#f0f3f6}h2{margin-top:1.6em;border-bottom:1px solid #ddd}"
    ".badge{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:bold}"
    ".plots{display:flex;flex-wrap:wrap;gap:18px}.scenario{margin:1em 0 1.8em}"
    ".note{color:#555;font-size:12.5px}code{background:#f6f8fa;padding:1px 4px}"
)


def esc(text: object) -> str:
    return _html.escape(str(text))


def badge(verdict: str | None) -> str:
    word = verdict or "none"
    return f'<span class="badge" style="background:{VERDICT_COLORS.get(word, "#666")}">{esc(word)}</span>'


def table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


_NUMBER = re.compile(r"^[\d.,]+( ms| MiB/s|x)?$")


def _cell(text: str) -> str:
    """A table cell; numbers (with their unit) right-aligned so their digits line up."""
    numeric = ' style="text-align:right"' if _NUMBER.match(str(text)) else ""
    return f"<td{numeric}>{esc(text)}</td>"


def html(doc: dict[str, Any], title: str | None = None) -> str:
    """The whole page for a ``httpbench.compare/1`` result document."""
    cfg, env = doc["config"], doc.get("environment") or {}
    names = [t["name"] for t in cfg["targets"]]
    colors = {name: COLORS[i % len(COLORS)] for i, name in enumerate(names)}
    title = title or "httpbench compare: " + " vs ".join(names)
    profile = doc.get("profile") or {}
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f"<p>Verdict {badge(doc.get('verdict'))} &nbsp; baseline <b>{esc(cfg['baseline'])}</b>; "
        f"method {esc(cfg.get('method', 'seed'))}"
        + (f", profile {esc(profile['name'])}" if profile else "")
        + f"; {esc(env.get('generated_at', ''))} on {esc(env.get('host', '?'))} "
        f"({esc(env.get('cpu_count', '?'))} CPUs, load {esc(_load(env))}, Python {esc(env.get('python', '?'))}, "
        f"httpbench {esc(env.get('httpbench', '?'))})</p>",
        *_evidence(doc),
        "<h2>Preflight</h2>",
        *_preflight(doc),
        "<h2>Scenarios</h2>",
        _legend(colors),
        *[_scenario(doc, sc, names, colors) for sc in cfg["scenarios"]],
    ]
    extras = extra_tables(doc)
    if extras:
        parts.append("<h2>Phases after the rounds</h2>")
        for name, headers, rows in extras:
            parts += [f"<h3>{esc(name)}</h3>", table(headers, rows)]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _load(env: dict[str, Any]) -> str:
    load = env.get("loadavg") or []
    return " ".join(f"{v:.2f}" for v in load) if load else "?"


def _evidence(doc: dict[str, Any]) -> list[str]:
    out = []
    for label, items in (("Gate failures", doc.get("gate_failures")), ("Undecided", doc.get("inconclusive"))):
        if items:
            out.append(f"<p><b>{label}</b></p><ul>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>")
    notes = (doc.get("profile") or {}).get("notes") or []
    if notes:
        out.append('<ul class="note">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    totals = doc.get("totals") or {}
    out.append(
        f'<p class="note">Timed requests: {totals.get("timed_requests", 0):,}, ok {totals.get("ok", 0):,}, '
        f"failed {totals.get('failures', 0):,}.</p>"
    )
    return out


def _preflight(doc: dict[str, Any]) -> list[str]:
    """Every scenario's answer per target (before any timing), then the profile's own checks."""
    rows = [
        [
            p["scenario"],
            p["target"],
            str(p.get("status", "—")),
            f"{p['body_bytes']:,}" if p.get("body_bytes") is not None else "—",
            (p.get("sha256") or "—")[:16],
            p.get("etag") or "—",
            p.get("content_range") or "—",
        ]
        for p in doc.get("preflight") or []
    ]
    out = [
        '<p class="note">Every scenario requested once at every target before any timing: all passed '
        "(a failure stops the run with one line, exit 2).</p>",
        table(["Scenario", "Target", "Status", "Bytes", "SHA-256", "ETag", "Content-Range"], rows),
    ]
    pre = (doc.get("profile") or {}).get("preflight") or {}
    facts = _profile_facts(pre)
    if facts:
        out.append("<ul>" + "".join(f"<li>{esc(f)}</li>" for f in facts) + "</ul>")
    return out


def _profile_facts(pre: dict[str, Any]) -> list[str]:
    """One line per thing a profile's preflight proved (the Hugging Face profile's records)."""
    out = []
    exp = pre.get("expected") or {}
    if exp.get("commit"):
        out.append(
            f"{exp.get('repo')}: commit {exp['commit']}, {exp.get('file')} {exp.get('size'):,} bytes, SHA-256 "
            f"{(exp.get('sha256') or '')[:16]}…, X-Repo-Commit, X-Linked-Etag/Size, Range and leak checks "
            f"on {len(pre.get('targets') or {})} targets"
        )
    models = pre.get("models") or {}
    for target, repos in (models.get("repos") or {}).items():
        listed = ", ".join(f"{repo} ({r['files']} files)" for repo, r in repos.items())
        out.append(f"{target}: {listed}: model info, tree, X-Repo-Commit, ETags and every byte as pinned")
    out += [
        f"{problem} (recorded, not stopped: --model-preflight report)"
        for problem in (models.get("problems") or {}).values()
    ]
    return out


def _legend(colors: dict[str, str]) -> str:
    swatches = " ".join(
        f'<span style="color:{c};font-weight:bold">■</span> {esc(name)}' for name, c in colors.items()
    )
    return (
        f'<p class="note">{swatches} &nbsp;·&nbsp; response time per round: solid p50, dashed p95, '
        "dotted p99 (nearest rank); throughput: successful requests per second of the round.</p>"
    )


def _scenario(doc: dict[str, Any], sc: dict[str, Any], names: list[str], colors: dict[str, str]) -> str:
    rounds = [r for r in doc["rounds"] if r["scenario"] == sc["name"] and r["target"] in names]
    rt = [
        (f"{name} {key[:3]}", colors[name], DASHES[key], _points(rounds, name, key))
        for name in names
        for key in DASHES
    ]
    tp = [(name, colors[name], "", _points(rounds, name, "rps")) for name in names]
    lines = [_verdict_line(cand, cmp) for cand, cmp in doc["comparisons"][sc["name"]].items()]
    return (
        f'<div class="scenario"><h3>{esc(sc["name"])} <span class="note">({esc(sc.get("class", ""))}, '
        f"{_count(len({r['round'] for r in rounds}), 'round')})</span></h3>"
        + "".join(f"<p>{line}</p>" for line in lines)
        + '<div class="plots">'
        + svg_plot(rt, "response time per round, log scale", "ms", log=True)
        + svg_plot(tp, "throughput per round", "req/s")
        + "</div></div>"
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _points(rounds: list[dict[str, Any]], target: str, key: str) -> list[tuple[int, float]]:
    mine = sorted((r for r in rounds if r["target"] == target), key=lambda r: r["round"])
    return [(r["round"], r[key]) for r in mine if r.get(key) is not None]


def _verdict_line(cand: str, cmp: dict[str, Any]) -> str:
    """A candidate's verdict with its evidence: the paired intervals, or the seed's ratios."""
    gate = cmp.get("gate") or {}
    decisions = _by_metric(cmp.get("decisions") or [])
    if decisions:
        parts = [
            f"{esc(metric)} {esc(_iv(d))} ({d.get('n')} pairs, {_f((d.get('confidence') or 0) * 100, 1)}% "
            f"interval) against {esc(_threshold(d))}: {esc(d.get('verdict'))}"
            for metric, d in decisions.items()
        ]
    else:
        ratios = cmp.get("ratios") or {}
        parts = [
            f"throughput {_x(ratios.get('throughput'))} (gate ≥ {_f(gate.get('min_throughput_ratio'))}x)",
            f"p95 {_x(ratios.get('p95'))} (gate ≤ {_f(gate.get('max_p95_ratio'))}x)",
        ]
    return f"<b>{esc(cand)}</b> {badge(cmp.get('verdict'))} vs {esc(cmp.get('baseline'))}: " + "; ".join(
        parts
    )


def _threshold(d: dict[str, Any]) -> str:
    sign = "≥" if d.get("worse") == "below" else "≤"
    return f"{sign} {_f(d.get('threshold'))}x"


Series = tuple[str, str, str, list[tuple[int, float]]]  # (label, colour, dash pattern, points)


def svg_plot(series: list[Series], title: str, unit: str, log: bool = False) -> str:
    """A small line plot over the rounds (x: round number; y: linear from 0, or ``log``: decades, so
    a p99 spike does not flatten the p50 line), one polyline and a dot per point with a hover title;
    empty series are left out."""
    values = [v for *_, pts in series for _, v in pts if v > 0 or not log]
    rounds = sorted({x for *_, pts in series for x, _ in pts})
    if not values:
        return f'<p class="note">{esc(title)}: no rounds.</p>'
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    span = max(len(rounds) - 1, 1)
    if log:
        lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
        hi = max(hi, lo + 1)
        ticks = [10.0**e * m for e in range(lo, hi) for m in (1, 2, 5)] + [10.0**hi]
        labelled = {10.0**e for e in range(lo, hi + 1)}
        frac = lambda v: (math.log10(max(v, 10.0**lo)) - lo) / (hi - lo)
    else:
        top = _nice(max(values) * 1.08)
        ticks = [top * i / 4 for i in range(5)]
        labelled = set(ticks)
        frac = lambda v: v / top

    def x(r: int) -> float:
        return _LEFT + (rounds.index(r) / span if len(rounds) > 1 else 0.5) * plot_w

    def y(v: float) -> float:
        return _TOP + plot_h - frac(v) * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
        f'font-family="sans-serif" font-size="10" role="img" aria-label="{esc(title)}">',
        f'<text x="{_LEFT}" y="13" font-size="11.5" fill="#333">{esc(title)} ({esc(unit)})</text>',
    ]
    for v in ticks:
        label = (
            f'<text x="{_LEFT - 4}" y="{y(v) + 3:.1f}" text-anchor="end" fill="#555">{esc(_tick(v))}</text>'
            if v in labelled
            else ""
        )
        shade = "#d6d6d6" if v in labelled else "#efefef"
        out.append(
            f'<line x1="{_LEFT}" y1="{y(v):.1f}" x2="{_W - _RIGHT}" y2="{y(v):.1f}" stroke="{shade}"/>{label}'
        )
    step = max(1, len(rounds) // 12)
    for r in rounds[::step]:
        out.append(f'<text x="{x(r):.1f}" y="{_H - 14}" text-anchor="middle" fill="#555">{r}</text>')
    out.append(
        f'<text x="{_LEFT + plot_w / 2:.1f}" y="{_H - 2}" text-anchor="middle" fill="#777">round</text>'
    )
    for label, color, dash, pts in series:
        if not pts:
            continue
        path = " ".join(f"{x(r):.1f},{y(v):.1f}" for r, v in pts)
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.6"{dashed}/>')
        for r, v in pts:
            out.append(
                f'<circle cx="{x(r):.1f}" cy="{y(v):.1f}" r="2.2" fill="{color}">'
                f"<title>{esc(label)} round {r}: {v:,.3f} {esc(unit)}</title></circle>"
            )
    out.append("</svg>")
    return "\n".join(out)


def _nice(v: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k at or above ``v`` (a round axis top)."""
    if v <= 0:
        return 1.0
    base = 10 ** math.floor(math.log10(v))
    return next(m * base for m in (1, 2, 2.5, 5, 10) if m * base >= v)


def _tick(v: float) -> str:
    if v >= 10_000:
        return f"{v / 1000:g}k"
    return f"{v:g}" if v >= 1 or v == 0 else f"{v:.2g}"
