"""The numbered sources an answer cites: one Citation per retrieved passage, then the facts layer's citations.

The facts layer (rag/facts.py, called by rag/engine.py) hands over `facts_block`, text whose lines cite [F1], [F2]
..., and `fact_citations`, the Citations those markers name. `prepare_facts` numbers them after the retrieved
passages and rewrites the markers to match.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..schema import Citation, RetrievalResult


def _int_or_none(value) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _str_or_none(value) -> str | None:
    return None if value in (None, "") else str(value)


def _fiscal_period(meta: dict) -> str | None:
    """The chunk's fiscal period ("Q1".."Q3", "FY"); a chunk indexed before periods were recorded has none, and
    its label then shows the fiscal year alone, as it always did."""
    return _str_or_none(str(meta.get("fiscal_period") or "").strip().upper())


def sources_from_retrieval(retrieval: RetrievalResult, first: int = 1) -> list[Citation]:
    """One Citation per retrieved node, numbered from `first` in retrieval order."""
    out = []
    for i, nws in enumerate(retrieval.nodes):
        node = nws.node
        m = dict(node.metadata or {})
        try:
            text = node.get_content()
        except Exception:  # noqa: BLE001
            text = getattr(node, "text", "") or ""
        out.append(
            Citation(
                number=first + i,
                chunk_id=node.node_id,
                doc_id=_str_or_none(m.get("doc_id")),
                ticker=_str_or_none(m.get("ticker")),
                company=_str_or_none(m.get("company")),
                form=_str_or_none(m.get("form")),
                fiscal_year=_int_or_none(m.get("fiscal_year")),
                fiscal_period=_fiscal_period(m),
                section=_str_or_none(m.get("section")),
                section_title=_str_or_none(m.get("section_title")),
                page_start=_int_or_none(m.get("page_start")),
                page_end=_int_or_none(m.get("page_end")),
                score=float(nws.score) if nws.score is not None else 0.0,
                text=text,
                char_start=_int_or_none(m.get("char_start")),
                char_end=_int_or_none(m.get("char_end")),
                source=_str_or_none(m.get("source")),
                url=_str_or_none(m.get("url")),
            )
        )
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
