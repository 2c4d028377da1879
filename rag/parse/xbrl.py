"""Inline XBRL: numeric facts (ix:nonFraction) with scale and sign applied, dei: facts, contexts (periods and
dimensions), and the metadata the dei: facts state (company, form, fiscal year and period, period end, shares
outstanding)."""

from __future__ import annotations

import re

from ..companies import TICKER_FORM, checked_ticker
from ..dates import fiscal_year_from_period_end
from .builder import WS_RE
from .cover import read_date
from .period import FISCAL_PERIODS, FP_DEI
from .results import Fact

_DEI_META = {
    "dei:entityregistrantname": "company",
    "dei:entitycentralindexkey": "cik",
    "dei:documenttype": "form",
}
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen".split()
    )
}
_TENS_WORDS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALE_WORDS = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}


def _words_to_number(text: str) -> float | None:
    """'no', 'none', 'twenty-five', 'one hundred' -> number (the ixt-sec:numwordsen format)."""
    words = re.findall(r"[a-z]+", text.lower())
    if not words:
        return None
    if words[0] in ("no", "none", "nil"):
        return 0.0
    total, current = 0, 0
    for w in words:
        if w in _NUMBER_WORDS:
            current += _NUMBER_WORDS[w]
        elif w in _TENS_WORDS:
            current += _TENS_WORDS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w in _SCALE_WORDS:
            total += max(current, 1) * _SCALE_WORDS[w]
            current = 0
        elif w != "and":
            return None
    return float(total + current)


def _fact_number(text: str, fmt: str) -> float | None:
    """The unsigned, unscaled number an ix:nonFraction displays, per its ixt format."""
    fmt = fmt.lower()
    stripped = text.strip()
    if "zero" in fmt or "dash" in fmt or re.fullmatch(r"[—–\-‒―]*", stripped):
        return 0.0
    if "word" in fmt:
        return _words_to_number(stripped)
    digits = re.sub(r"[^\d.,]", "", stripped)
    if "comma" in fmt and "decimal" in fmt:  # 1.234,5
        digits = digits.replace(".", "").replace(",", ".")
    else:
        digits = digits.replace(",", "")
    try:
        return float(digits)
    except ValueError:
        return None


def _attr(el, name: str) -> str:
    """Attribute by lower-case name: lxml's HTML parser lower-cases them, a browser-saved copy already is."""
    return el.get(name) or ""


class FactCollector:
    """The inline XBRL facts and contexts met during the HTML walk, in document order; `finish` attaches periods,
    dimensions and text spans once the text is built, `meta` reads the dei: facts."""

    def __init__(self) -> None:
        self.facts: list[Fact] = []
        self.contexts: dict[str, tuple[str | None, str | None, dict[str, str]]] = {}
        self.dei: dict[str, list[tuple[str, float | None]]] = {}

    def add_numeric(self, el) -> int:
        text = WS_RE.sub(" ", "".join(el.itertext())).strip()
        concept = _attr(el, "name")
        fmt = _attr(el, "format")
        try:
            scale = int(_attr(el, "scale") or 0)
        except ValueError:
            scale = 0
        value = None if _attr(el, "xsi:nil") == "true" else _fact_number(text, fmt)
        if value is not None:
            value = value * 10.0**scale if -30 < scale < 30 else None
        if value is not None and _attr(el, "sign") == "-":
            value = -value
        fact = Fact(concept=concept, value=value, text=text, unit=_attr(el, "unitref"),
                    context_id=_attr(el, "contextref"), period_start=None, period_end=None,
                    decimals=el.get("decimals"), scale=scale)
        self.facts.append(fact)
        if concept.lower().startswith("dei:"):
            self.dei.setdefault(concept.lower(), []).append((text, value))
        return len(self.facts) - 1

    def add_nonnumeric(self, el) -> int | None:
        concept = _attr(el, "name")
        if not concept.lower().startswith("dei:"):
            return None  # text blocks and policies: their text is in the body already, not a fact here
        text = WS_RE.sub(" ", "".join(el.itertext())).strip()
        self.dei.setdefault(concept.lower(), []).append((text, None))
        self.facts.append(Fact(concept=concept, value=None, text=text, unit="",
                               context_id=_attr(el, "contextref"), period_start=None, period_end=None))
        return len(self.facts) - 1

    def add_context(self, el) -> None:
        ctx_id = _attr(el, "id")
        start = end = None
        dims: dict[str, str] = {}
        for sub in el.iter():
            tag = sub.tag if isinstance(sub.tag, str) else ""
            local = tag.rsplit(":", 1)[-1]
            if local == "startdate":
                start = (sub.text or "").strip() or None
            elif local in ("enddate", "instant"):
                end = (sub.text or "").strip() or None
            elif local in ("explicitmember", "typedmember"):
                dims[_attr(sub, "dimension")] = WS_RE.sub(" ", "".join(sub.itertext())).strip()
        if ctx_id:
            self.contexts[ctx_id] = (start, end, dims)

    def finish(self, spans: dict[int, tuple[int, int]], text: str) -> None:
        """Attach periods, dimensions and text spans (trimmed of surrounding whitespace)."""
        for idx, fact in enumerate(self.facts):
            ctx = self.contexts.get(fact.context_id)
            if ctx:
                fact.period_start, fact.period_end = ctx[0], ctx[1]
                fact.dimensions = dict(ctx[2])
            span = spans.get(idx)
            if span:
                start, end = span
                while start < end and text[start].isspace():
                    start += 1
                while end > start and text[end - 1].isspace():
                    end -= 1
                fact.char_start, fact.char_end = start, end
                if fact.value is None and not fact.unit:
                    fact.text = text[start:end]  # a text fact spanning blocks keeps its block breaks

    def _ticker(self, meta: dict) -> None:
        """The first dei:TradingSymbol that is a ticker by the rule `rag edit` applies. One that is not (a payload,
        a sentence) is never the filing's ticker: the cover's table or the company's other filings may name it, and
        meta["notes"] says why the tag was passed over."""
        symbols = [text for text, _ in self.dei.get("dei:tradingsymbol", []) if text.strip()]
        ticker = next((t for s in symbols if (t := checked_ticker(s))), None)
        if ticker:
            meta["ticker"] = ticker
        elif symbols:
            shown = symbols[0].strip()
            shown = shown if len(shown) <= 40 else shown[:40] + "..."
            meta.setdefault("notes", []).append(
                f"The filing's dei:TradingSymbol {shown!r} is not a ticker ({TICKER_FORM}), so it is not used as "
                "one; the ticker comes from the cover page or the company's other filings, if they name one.")

    def meta(self) -> dict:
        meta: dict = {}
        for concept, key in _DEI_META.items():
            for text, _ in self.dei.get(concept, []):
                if text:
                    meta[key] = text
                    break
        self._ticker(meta)
        for text, _ in self.dei.get("dei:documentfiscalyearfocus", []):
            if re.fullmatch(r"\d{4}", text):
                meta["fiscal_year"] = int(text)
                meta["fiscal_year_source"] = "dei:DocumentFiscalYearFocus"
                break
        for text, _ in self.dei.get("dei:documentfiscalperiodfocus", []):
            if text.strip().upper() in FISCAL_PERIODS:
                meta["fiscal_period"] = text.strip().upper()
                meta["fiscal_period_source"] = FP_DEI
                break
        for text, _ in self.dei.get("dei:documentperiodenddate", []):
            iso = read_date(text)
            if iso:
                meta["period_end"] = iso
                break
        if "fiscal_year" not in meta and "period_end" in meta:
            meta["fiscal_year"] = fiscal_year_from_period_end(meta["period_end"])
            meta["fiscal_year_source"] = "period_end"
        shares = [v for _, v in self.dei.get("dei:entitycommonstocksharesoutstanding", []) if v is not None]
        if shares:
            # One value per share class (a filer may report A, B and C): the total is what "shares outstanding" means.
            meta["shares_outstanding"] = int(sum(shares))
        if "form" in meta:
            meta["form"] = meta["form"].upper()
        return meta
