"""Where else a filing prints a figure the facts layer answers with: MD&A restates the statements' and the
notes' tagged figures in tables and sentences of its own ("<Segment> | 120,000 | 110,000", "Corporate's operating
loss ... was $4,271 million"), mostly untagged. An analyst checks a figure in either place, so the sources lead
with the tagged passage and then the passage that restates it.
"""

from __future__ import annotations

import re
from typing import Iterable

from ..words import tokens
from .views import Value

RESTATING_PER_FIGURE = 1  # passages that restate one figure, after the one that tags it


def reported_values(values: Iterable[Value]) -> list[Value]:
    """The reported figures behind an answer's values: each value itself, or a computed value's inputs."""
    out: list[Value] = []
    for v in values:
        for r in ([v] if v.reported else reported_values(v.inputs)):
            if r not in out:
                out.append(r)
    return out


def _printed(value: Value) -> re.Pattern | None:
    """The figure as the filing prints it ("128,764", "4,271"), as a whole number in a text: not a part of a longer
    number. None for a figure too short to tell apart from others (a one- or two-digit amount)."""
    fact = value.fact
    text = (fact.text or "").strip() if fact else ""
    if len(re.sub(r"\D", "", text)) < 3:
        return None
    return re.compile(r"(?<![\d.,])" + re.escape(text) + r"(?![\d]|[.,]\d)")


def _names(value: Value) -> list[set[str]]:
    """The words a restatement may print beside the figure, each set one way of naming it: a part of the company
    by its member's name ("<Segment>"); the whole by the row labels the filing prints beside the tagged figure
    ("Total net sales") or by the figure's own label ("Total revenue")."""
    if value.member:
        return [set(tokens(value.member))]
    labels = [r.row_label for r in value.group.rows if r.row_label] if value.group else []
    names = [set(tokens(label)) for label in labels + [value.printed_label or "", value.metric.label]]
    return [words for i, words in enumerate(names) if words and words not in names[:i]]


def restating(value: Value, passages: Iterable, cited: set[str]) -> list:
    """The passages (nodes with `node_id` and `text`, in the order given) other than those `cited` that print
    the value's figure on a line that also holds every word of one of its names (see _names); at most
    RESTATING_PER_FIGURE."""
    figure = _printed(value)
    names = _names(value)
    if figure is None or not names:
        return []
    found = []
    for node in passages:
        if node.node_id in cited or not figure.search(node.text):
            continue
        lines = [set(tokens(line)) for line in node.text.splitlines() if figure.search(line)]
        if any(words <= line for line in lines for words in names):
            found.append(node)
            if len(found) == RESTATING_PER_FIGURE:
                break
    return found
