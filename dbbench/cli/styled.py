"""Colour on a terminal: the diff's aligned plans drawn as rich trees from the styled lines the
renderers return (:func:`dbbench.output.plans.styled_lines`); everything else printed as it is."""

from __future__ import annotations

import sys

import click
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from rich.tree import Tree

from dbbench.document.diff import DiffReport
from dbbench.output import diff, plans

STYLE = {
    plans.WORSE: "bold red",
    plans.BETTER: "green",
    plans.OTHER: "yellow",
    plans.QUIET: "dim",
    "dim": "dim",
    "plain": "",
}


def plan_tree(lines: list[tuple[int, list[plans.Segment]]], title: str) -> Group:
    """``title``, then the styled lines as a tree (long lines fold under their guide)."""
    nodes: list[Tree] = []
    for depth, segments in lines:
        text = Text(overflow="fold")
        for words, style in segments:
            text.append(words, style=STYLE[style])
        if not nodes:
            nodes.append(Tree(text, guide_style="dim"))
            continue
        del nodes[depth:]
        nodes.append(nodes[depth - 1].add(text))
    return Group(Text(title, style="bold"), *nodes[:1])


def diff_renderables(report: DiffReport) -> list[RenderableType]:
    """The terminal report (:func:`dbbench.output.diff.text_parts`) with each regressed shape's
    aligned plans as a coloured tree: red where a node examines more rows (or a full scan, sort
    or temporary table was added), green fewer, yellow another operation or index."""
    out: list[RenderableType] = []
    for part in diff.text_parts(report):
        if isinstance(part, str):
            out.append(Text(part))
            continue
        d = part.aligned
        assert d is not None
        tree = plan_tree(plans.styled_lines(d), "plan, baseline → result")
        out.append(Padding(tree, (0, 0, 0, 4)))
    return out


def echo_diff(report: DiffReport, color: str) -> None:
    """Print the diff in colour when ``color`` is ``always``, or ``auto`` on a terminal without
    NO_COLOR; else as plain text (:func:`dbbench.output.diff.to_text`). Text is never wrapped
    (wide tables stay tables); the trees fit the terminal (160 columns off one)."""
    console = Console(force_terminal=True if color == "always" else None, highlight=False)
    if color == "never" or (color == "auto" and (not console.is_terminal or console.no_color)):
        click.echo(diff.to_text(report))
        return
    if not sys.stdout.isatty():
        console.width = 160
    for part in diff_renderables(report):
        console.print(part, soft_wrap=isinstance(part, Text))
