"""Result lists put together: repeats dropped, and the lists of several companies, years or Items interleaved.

Within one search, the order is the fitted ranking's (rag/ranking.py); this module only merges lists and keeps
one place per passage.
"""

from __future__ import annotations

import re

from llama_index.core.schema import NodeWithScore

_SIGNATURE_TOKEN = re.compile(r"[a-z]+|\d[\d,.]*\d|\d")
REPEAT_SIMILARITY = 0.9  # share of distinct words and figures two chunks must have in common to be one passage


def passage_signature(node) -> frozenset[str]:
    """A chunk's words and figures, without its header line (which differs between filings)."""
    return frozenset(_SIGNATURE_TOKEN.findall(node.text.split("\n", 1)[-1].lower()))


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


def round_robin(lists: list[list], k: int) -> list:
    out, seen = [], set()
    for rank in range(max((len(x) for x in lists), default=0)):
        for results in lists:
            if rank < len(results) and results[rank].node.node_id not in seen:
                seen.add(results[rank].node.node_id)
                out.append(results[rank])
    return out[:k]
