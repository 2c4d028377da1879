"""The numbered sources an answer cites: one Citation per retrieved passage, then the facts layer's citations.

The facts layer (rag/facts.py, called by rag/engine.py) hands over `facts_block`, text whose lines cite [F1], [F2]
..., and `fact_citations`, the Citations those markers name. `prepare_facts` numbers them after the retrieved
passages and rewrites the markers to match.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..schema import Citation, RetrievalResult


def sources_from_retrieval(retrieval: RetrievalResult, first: int = 1) -> list[Citation]:
    """One Citation per retrieved node, numbered from `first` in retrieval order."""
    out = []
    for i, nws in enumerate(retrieval.nodes):
        node = nws.node
        try:
            text = node.get_content()
        except Exception:  # noqa: BLE001
            text = getattr(node, "text", "") or ""
        score = float(nws.score) if nws.score is not None else 0.0
        out.append(Citation.from_chunk(first + i, node.node_id, text, dict(node.metadata or {}), score=score))
    return out


def prepare_facts(
    facts_block: str | None, fact_citations: list[Citation] | None, start: int
) -> tuple[str | None, list[Citation]]:
    """Renumber [F1], [F2] ... to [start], [start+1] ...; each fact citation's evidence gets the block's lines
    that cite it."""
    if not facts_block and not fact_citations:
        return None, []
    cites = []
    for i, c in enumerate(fact_citations or []):
        # A passage the facts layer read a figure from (a count stated in prose) stays a passage.
        cites.append(replace(c, number=start + i, kind="passage" if c.kind == "passage" else "fact"))

    def renumber(m: re.Match) -> str:
        i = int(m.group(1)) - 1
        return f"[{start + i}]" if 0 <= i < len(cites) else ""

    text = re.sub(r"\[F(\d+)\]", renumber, facts_block or "", flags=re.IGNORECASE) if facts_block else None
    if text is None and cites:
        text = "\n".join(f"{c.text.strip()} [{c.number}]" for c in cites if c.text.strip())
    for i, c in enumerate(cites):
        lines = [ln for ln in (text or "").splitlines() if f"[{c.number}]" in ln]
        extra = "\n".join(ln for ln in lines if ln.strip() not in c.text)
        if extra:
            cites[i] = replace(c, text=(c.text + "\n" + extra).strip())
    return text, cites
