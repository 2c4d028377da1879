"""python -m rag facts TICKER [--fy 2024] [--concept Revenues]: a company's stored facts, printed."""

from __future__ import annotations

import json
import logging
import os
import sys

from .labels import concept_label, dims_label
from .layer import FactsLayer
from .metrics import METRICS
from .store import FactStore

log = logging.getLogger(__name__)

# ==============================================================================================================
# The CLI: python -m rag facts TICKER [--fy 2024] [--concept Revenues]


def print_facts(ticker: str, settings, fiscal_year: int | None = None, concept: str | None = None, out=None) -> int:
    """Print a company's facts: per filing, the key figures of its own fiscal year and its consolidated facts, or
    every fact whose concept or label contains `concept`. Returns the exit code."""
    try:
        return _print_facts(ticker, settings, fiscal_year, concept, out or sys.stdout)
    except BrokenPipeError:  # `python -m rag facts ACME | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _print_facts(ticker: str, settings, fiscal_year: int | None, concept: str | None, out) -> int:
    store = FactStore.for_settings(settings)
    layer = FactsLayer(settings, store=store)
    ticker = (ticker or "").upper()
    filings = store.filings(ticker=ticker)
    if not filings:
        known = store.tickers()
        hint = (f" Companies with facts: {', '.join(known)}." if known else
                " No filing has facts yet: they are stored when filings are indexed "
                "(python -m rag index PATH; running it again on already indexed filings adds their facts).")
        print(f"No XBRL facts stored for {ticker}.{hint}", file=sys.stderr)
        return 1
    if fiscal_year is not None:
        chosen = [f for f in filings if f.get("fiscal_year") == int(fiscal_year)]
        if not chosen:
            years = ", ".join(f"FY{f.get('fiscal_year')}" for f in filings)
            print(f"No FY{fiscal_year} filing of {ticker} has facts; indexed: {years}.", file=sys.stderr)
            return 1
        filings = chosen
    pattern = (concept or "").strip().lower()
    shown = 0
    for f in filings:
        view = layer.view(f)
        own_end = view.year_ends[0] if view.year_ends else f.get("period_end")
        period = f"{f.get('period_start') or '?'} to {own_end or '?'}"
        print(f"\n{f.get('company') or ticker} ({ticker}) · {f.get('form')} FY{f.get('fiscal_year')} · fiscal period "
              f"{period} · doc {f['doc_id']} · {f.get('fact_count', 0)} facts", file=out)
        if not pattern:
            if view.annual and f.get("fiscal_year") is not None:
                print("\n  Key figures (consolidated, this filing's own fiscal year):", file=out)
                for m in METRICS:
                    if not m.listed:
                        continue
                    v = layer.value(m, ticker, int(f["fiscal_year"])) if layer.locate(ticker, int(f["fiscal_year"])) \
                        and layer.locate(ticker, int(f["fiscal_year"]))[0].doc_id == f["doc_id"] else None
                    if v is None:
                        continue
                    src = v.fact.concept if v.reported else f"computed: {v.metric.formula}"
                    print(f"  {m.label:<44} {v.display():>26}  {src}", file=out)
                    shown += 1
            groups = [g for g in view.groups if not g.dims and g.period_end == own_end]
            print(f"\n  Consolidated facts for the period ending {own_end} ({len(groups)}; --concept NAME lists every "
                  "fact of a concept, dimensions and prior years included):", file=out)
        else:
            groups, figure = _matching(view.groups, pattern)
            if figure:
                print(f"\n  No concept or label here contains {concept!r}; {figure}: {len(groups)}",
                      file=out)
            else:
                print(f"\n  Facts matching {concept!r}: {len(groups)}", file=out)
        groups.sort(key=lambda g: (g.concept, g.dims != {}, -(int((g.period_end or '0000')[:4])),
                                   g.period_end or "", json.dumps(g.dims, sort_keys=True)))
        for g in groups:
            r = g.best
            when = r.period_text()
            occurrences = f" ×{len(g.rows)}" if len(g.rows) > 1 else ""
            warn = "  (!) occurrences disagree" if g.conflict else ""
            print(f"  {g.concept:<60} {r.display():>26}  {when:<26} {concept_label(g.concept)}{occurrences}{warn}",
                  file=out)
            if g.dims:
                print(f"  {'':<60}   [{dims_label(g.dims)}]", file=out)
            shown += 1
        print(file=out)
    return 0 if shown else 1


def _matching(groups, pattern: str) -> tuple[list, str]:
    """The fact groups `--concept` names, and how they were found ("" for the plain reading).

    The plain reading: every group whose concept or label contains `pattern`, with or without its taxonomy prefix.
    When none does and `pattern` names a figure of the facts vocabulary (one of its concepts, prefix or not, or its
    label), the groups of every concept that figure is tagged with: filers tag one figure under different concepts
    (total revenue as `Revenues` or as `RevenueFromContractWithCustomerExcludingAssessedTax`), and someone asking for
    the usual name wants this filer's own."""
    found = [g for g in groups if pattern in g.concept.lower() or pattern in concept_label(g.concept).lower()]
    if found or not pattern:
        return found, ""
    local = pattern.rsplit(":", 1)[-1]
    figures = [m for m in METRICS if m.concepts and (
        m.label.lower() == pattern or any(c.rsplit(":", 1)[-1].lower() == local for c in m.concepts))]
    tagged = {c for m in figures for c in m.concepts}
    found = [g for g in groups if g.concept in tagged]
    if not found:
        return [], ""
    held = sorted({g.concept for g in found})
    names = " or ".join(m.label for m in figures)
    return found, f"{names}, the figure it names, is tagged here as {', '.join(held)}"
