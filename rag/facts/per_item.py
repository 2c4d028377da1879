"""A figure asked per item that the filing counts only in prose ("revenue per processed claim", "revenue per
employee"), as the facts layer answers it: the tagged amount over the count a retrieved passage of the same filing
states (rag.facts.rates reads the count)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Iterable

from ..schema import Citation, QuestionPlan
from ..words import tokens
from .labels import format_amount, member_words
from .rates import stated_count
from .render import FactAnswer, FactsBlock
from .views import Value

# The axes whose members are parts of the company (its segments, its regions).
_PART_AXES = ("us-gaap:StatementBusinessSegmentsAxis", "srt:StatementGeographicalAxis")
_SEGMENT_WORD = re.compile(r"\bsegments?\b", re.I)


class PerItemRates:
    """Mixed into FactsLayer: needs its answer_for() and view()."""

    def rate_per_item(self, plan: QuestionPlan, passages: Iterable[tuple[str, str, dict]],
                      tickers: Iterable[str] | None = None, years: Iterable[int] | None = None) -> FactAnswer | None:
        """A figure asked per item that the filing counts in prose only ("revenue per processed claim", "revenue
        per employee"): the tagged amount of the fiscal year over the count a retrieved passage of the same filing
        states for that year (rag.facts.rates), both cited. `passages` are (chunk id, text, metadata) of the
        retrieved chunks. None unless one company's one amount and one such count are found."""
        tickers = list(plan.tickers if tickers is None else tickers)
        if not plan.per_item or len(tickers) != 1 or plan.periods or plan.latest_quarters:
            return None
        calc = plan.calculation
        if calc.growth or calc.ratio or calc.compares or calc.share_of_end is not None or calc.total:
            return None
        # The amount divided: the figure asked, without the rate ("net sales" of "net sales per employee").
        amount_plan = replace(plan, per_item=[], metrics=[
            replace(mt, after=[w for w in mt.after if w != "per"]) for mt in plan.metrics])
        whole = self.answer_for(amount_plan, tickers, years)
        if whole is None or whole.operation != "lookup" or len(whole.values) != 1:
            return None
        amount = whole.values[0]
        if amount.kind != "money" or not amount.reported or amount.quarter is not None or amount.comparative:
            return None
        filing_year = int(amount.filing.get("fiscal_year") or 0)
        another_part = self._another_part(amount)
        counts = []
        for chunk_id, text, meta in passages:
            if meta.get("doc_id") != amount.filing.get("doc_id"):
                continue
            count = stated_count(text, plan.per_item, int(amount.fiscal_year), filing_year, another_part)
            if count is not None and count.value > 0:
                counts.append((count, chunk_id, meta, text))
        if len({c.value for c, *_ in counts}) != 1:
            return None
        count, chunk_id, meta, text = counts[0]
        item = " ".join(plan.per_item)
        rate = amount.amount / count.value
        shown = format_amount(rate, "money", scale=0, places=2 if abs(rate) < 1000 else 0, unit=amount.unit)
        # The lookup's one figure is its [F1]; the passage that states the count is [F2].
        line = (f"- {amount.who()} · {amount.when()}: {amount.label} per {item} = {shown} = "
                f"{FactsBlock(self).full(amount)} / {count.raw} [F2] (the count is stated in the filing's text, not "
                "tagged XBRL data: check that it counts the same period and business)")
        passage = Citation.from_chunk(2, chunk_id, text, meta, score=1.0, kind="passage")
        result = {"label": f"{amount.label} per {item}, {amount.ticker} {amount.period_label()}", "value": rate,
                  "display": shown, "formula": f"{amount.label} / {count.raw}", "inputs": [amount.to_dict()],
                  "count": count.value, "count_text": count.sentence}
        return FactAnswer(block="\n".join([line] + [f"Note: {n}" for n in whole.notes]),
                          citations=whole.citations[:1] + [passage], values=whole.values,
                          results=[result], notes=whole.notes, operation="rate per item")

    def _another_part(self, amount: Value) -> Callable[[str], bool]:
        """Whether a sentence speaks of another part of the company than the amount's: it says "segment", or names
        a segment or region the filing tags (by the member's own words beyond the company's name), other than the
        amount's own member."""
        view = self.view(amount.filing)
        company = set(tokens(amount.filing.get("company") or "")) | {amount.ticker.lower()}
        own = set((amount.group.dims or {}).values()) if amount.group else set()
        parts: dict[str, tuple[set[str], str]] = {}
        for g in view.groups:
            for axis, member in g.dims.items():
                # A remainder ("Other countries", "All other") is no part prose names: "in 38 countries" is not it.
                if axis in _PART_AXES and member not in own and member_words(member)[:1] not in (["other"], ["all"]):
                    words = set(tokens(" ".join(member_words(member)))) - company
                    if words:
                        parts[member] = (words, "".join(member_words(member)))

        def another(sentence: str) -> bool:
            said = set(tokens(sentence))
            # A name the member runs together is printed apart ("AcmerxMember": "Acme Rx fulfilled ...").
            run_together = re.sub(r"[^a-z0-9]", "", sentence.lower())
            return (not own and bool(_SEGMENT_WORD.search(sentence))) or any(
                w <= said or (len(joined) >= 6 and joined in run_together) for w, joined in parts.values())
        return another
