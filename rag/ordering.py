"""The order of retrieved passages: the hand-set rules that move passages within and between result lists.

Each rule is a prior written by hand (accounting-standard notes last, prose before tables for a why-question, the
Items a topic points to forward, repeats dropped, each company's or year's list interleaved). They live together
so that one scoring function with fitted weights can replace them as a whole.
"""

from __future__ import annotations

import re

from llama_index.core.schema import NodeWithScore

from .schema import Filters, QuestionPlan

# A note on an accounting standard the FASB issued ("In November 2023, the FASB issued ASU 2023-07, Segment
# Reporting ..."), opening its passage, under its heading or not: every filer repeats one, and it describes what the
# standard requires in the very words a question about the company's own segments, income taxes or expenses uses
# ("reportable segments", "disaggregation of expenses"). It answers only a question about accounting standards, so
# otherwise its passages rank after all others.
_STANDARD_NOTE = re.compile(
    r"^(?:[A-Z][\w ,-]{0,80}?(?:pronouncements?|standards?|guidance)[\w ,-]{0,40}?\s+)?"
    r"(?:In\s+\w+\s+\d{4},\s+the\s+(?:FASB|Financial\s+Accounting\s+Standards\s+Board)\b|"
    r"(?:ASU|Accounting\s+Standards\s+Update)\b)", re.I)


def is_standard_note(node) -> bool:
    """A passage that opens with a note on an accounting standard the FASB issued (see _STANDARD_NOTE)."""
    return bool(_STANDARD_NOTE.match(" ".join(node.text.split("\n", 1)[-1].split()[:40])))


def with_list_heads(fused: list, lists: list[list], heads: int) -> list:
    """The fused results with each list's best `heads` passages among the first: reciprocal rank fusion scores a
    passage only one retriever finds below passages both find at middling ranks, so a passage keyword search
    ranks second (an exact phrase dense search misses) fell out of the results. The fused first stays first."""
    lead = [r for found in lists for r in found[:heads]]
    order, seen = [], set()
    for r in fused[:1] + lead + fused[1:]:
        if r.node.node_id not in seen:
            seen.add(r.node.node_id)
            order.append(r)
    return order


_SIGNATURE_TOKEN = re.compile(r"[a-z]+|\d[\d,.]*\d|\d")
REPEAT_SIMILARITY = 0.9  # share of distinct words and figures two chunks must have in common to be one passage


def passage_signature(node) -> frozenset[str]:
    """A chunk's words and figures, without its header line (which differs between filings)."""
    return frozenset(_SIGNATURE_TOKEN.findall(node.text.split("\n", 1)[-1].lower()))


def reordered(results: list, standards_last: bool, prose_first: bool) -> list:
    """The results with the notes on accounting standards last (unless the question is about standards) and, for a
    question about why or how, passages of prose a few places ahead of passages of table lines."""
    if standards_last:
        results = standard_notes_last(results)
    return prose_before_tables(results) if prose_first else results


# How many places a passage made mostly of table lines gives up to the prose after it, for a question about why
# or how (see prose_before_tables).
TABLE_PLACES = 3


def prose_before_tables(results: list) -> list:
    """For a question asking why or how a figure moved, or about risks and policies, a passage that is mostly table
    lines moves TABLE_PLACES places down: the reasons are told in prose (MD&A explains the changes the statements
    only show), and a statement whose line names the metric otherwise outranks the sentence that says why."""
    def key(item):
        rank, result = item
        lines = [ln for ln in result.node.get_content().splitlines()[1:] if ln.strip()]
        table = bool(lines) and sum("|" in ln for ln in lines) * 2 >= len(lines)
        return rank + (TABLE_PLACES + 0.5 if table else 0)

    return [result for _rank, result in sorted(enumerate(results), key=key)]


def standard_notes_last(results: list) -> list:
    """The results with the notes on accounting standards after all others, each group in its order."""
    notes = [is_standard_note(r.node) for r in results]
    return [r for r, note in zip(results, notes) if not note] + [r for r, note in zip(results, notes) if note]


def drop_repeats(results: list, k: int, signatures_by_id: dict | None = None) -> list:
    """One place per passage. Filings repeat themselves: the same paragraph stands in every year's 10-K, and in
    both MD&A and the notes of one. Copies after the first are dropped (a table whose figures changed is not a
    copy: its figures are part of what is compared); of one company's copies in different fiscal years, the
    latest filing's copy takes the best copy's place, since that is the company's current wording."""
    kept: list = []
    signatures: list[frozenset[str]] = []
    cache = signatures_by_id if signatures_by_id is not None else {}
    for result in results:
        signature = cache.get(result.node.node_id)
        if signature is None:
            if len(cache) > 4096:  # bounded: a few thousand recent chunks, not the whole index
                cache.clear()
            signature = cache[result.node.node_id] = passage_signature(result.node)
        twin = None
        for i, other in enumerate(signatures):
            union = len(signature | other)
            if union and len(signature & other) / union >= REPEAT_SIMILARITY:
                twin = i
                break
        if twin is None:
            kept.append(result)
            signatures.append(signature)
            continue
        held = kept[twin].node.metadata
        meta = result.node.metadata
        if (meta.get("ticker") == held.get("ticker")
                and int(meta.get("fiscal_year") or 0) > int(held.get("fiscal_year") or 0)):
            kept[twin] = NodeWithScore(node=result.node, score=kept[twin].score)
            signatures[twin] = signature
    return kept[:k]


def after_first(nodes: list, inserted: list, k: int) -> list:
    """`inserted` placed after the first of `nodes` (each once), the rest of `nodes` after them; one already that
    high in `nodes` keeps its place."""
    high = {n.node.node_id for n in nodes[:1 + len(inserted)]}
    inserted = [n for n in inserted if n.node.node_id not in high]
    ids = {n.node.node_id for n in inserted}
    rest = [n for n in nodes if n.node.node_id not in ids]
    return (rest[:1] + inserted + rest[1:])[:k]


# How many places a passage of the Items a question's topic points to moves up among a list's results (see
# topic_items_forward): enough to pass the MD&A and note passages that share the question's words.
TOPIC_ITEM_LEAD = 2


def topic_items_forward(results: list, plan: QuestionPlan, group: Filters) -> list:
    """A soft prior for the Items whose required content a question asks about without naming them (Regulation
    S-K: what the business and its products are in Item 1, its properties in Item 2...): each of their passages
    moves up TOPIC_ITEM_LEAD places, ahead of MD&A and notes that share the question's words. Only for a question
    told in prose; a figure is as often printed in Item 7 or 8 as in the Item the topic names."""
    topic_items = set(plan.topic_sections)
    if not topic_items or plan.asks_figure or group.sections:
        return results
    lead = TOPIC_ITEM_LEAD + 0.5  # past that many others, never tying with one
    order = sorted(range(len(results)), key=lambda i: i - (
        lead if results[i].node.metadata.get("section") in topic_items else 0))
    return [results[i] for i in order]


def round_robin(lists: list[list], k: int) -> list:
    out, seen = [], set()
    for rank in range(max((len(x) for x in lists), default=0)):
        for results in lists:
            if rank < len(results) and results[rank].node.node_id not in seen:
                seen.add(results[rank].node.node_id)
                out.append(results[rank])
    return out[:k]
