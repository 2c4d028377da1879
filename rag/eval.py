"""Scoring question sets against the current index (format: ../shared/eval/FORMAT.md) and FinanceBench."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.llm import LLMChatInProgressEvent
from pydantic import Field

from .answer.citations import CITATION_MARKER, citation_numbers
from .config import Settings
from .dates import MONTH_PATTERN
from .engine import Engine, answered_question
from .index import open_store
from .schema import Filters, period_label

# The question kinds FORMAT.md defines, in its order: every report lists an answer accuracy for each.
KINDS = ("lookup", "narrative", "section", "multi-year", "cross-company", "computed", "period-trap", "cross-form",
         "refusal")
SPLITS = ("all", "tune", "blind")
# The fields a gold filing may give; a chunk matches it when every field given matches.
FILING_FIELDS = ("ticker", "fiscal_year", "form", "fiscal_period")

_SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "k": 1e3, "m": 1e6, "mn": 1e6,
                "bn": 1e9, "b": 1e9}
# A money unit: a currency's ISO 4217 code (capitals, or "usd" in any case), alone or with its scale ("USD
# millions", "EUR billions", "JPY").
_MONEY_UNIT = re.compile(r"(?:[A-Z]{3}|(?i:usd))(?:\s+(?i:(thousands|millions|billions)))?")
_MONEY_SCALE = {None: 1.0, "thousands": 1e3, "millions": 1e6, "billions": 1e9}

# Numbers in an answer that are labels, not figures: citation markers ("[2]"), dates ("June 28, 2025", "28 June
# 2025", "2025-06-28", "May 2024"), fiscal labels ("FY2025", "fiscal 2024", "Q3", "3Q25"), form and Item names
# ("10-Q", "Item 7", "Note 12"). Left in, a quarter number or a day could be read as a small figure or a distractor.
_LABELS = re.compile("|".join((
    r"\[\d+(?:\s*[,\u2013-]\s*\d+)*\]",
    r"\b" + MONTH_PATTERN + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\b(?:,?\s+(?:19|20)\d{2}\b)?",
    r"(?<![\d,.])\b\d{1,2}\s+" + MONTH_PATTERN + r"\b\.?(?:,?\s+(?:19|20)\d{2}\b)?",
    r"(?<![\d,.])\b(?:19|20)\d{2}-\d{2}-\d{2}\b",
    r"\b" + MONTH_PATTERN + r"\.?,?\s+(?:19|20)\d{2}\b",
    r"\b(?:fy|fiscal(?:\s+year)?)\s*'?(?:(?:19|20)\d{2}|\d{2})\b",
    r"\bQ[1-4]\b", r"(?<![\d,.])\b[1-4]Q(?:\d{2})?\b",
    r"\b10-[KQ]\b", r"\b(?:Item|Note)\s+\d+[A-C]?\b",
)), re.IGNORECASE)

# A figure: an optional sign or opening parenthesis, an optional "$", the digits (thousands separated by commas),
# an optional closing parenthesis, then an optional percent sign or scale word ("million", "bn", "M").
_FIGURE = re.compile(
    r"(?P<sign>[-\u2212\u2013(]\s?)?(?:US)?\$?\s?(?P<paren>\()?(?<![\w.])(?P<num>\d[\d,]*(?:\.\d+)?)\)?"
    r"(?:\s*(?P<word>%|per\s?cent\b|thousands?\b|millions?\b|billions?\b|trillions?\b|bn\b|mn\b|[kmb]\b))?",
    re.IGNORECASE)


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip().lower()


def evidence_found(piece: list[str], chunk_text: str) -> bool:
    text = normalize(chunk_text)
    return all(normalize(s) in text for s in piece)


def answer_evidence(question: dict, answer: str) -> float | None:
    """The share of the question's evidence strings (every inner list together) that the answer's own text holds,
    compared as evidence is, bold and code marks aside: an answer quoting the sentences that answer scores high, a
    quote of the right passage's heading low. None for a refusal question or one without evidence."""
    strings = [s for piece in question.get("evidence") or [] for s in piece if s.strip()]
    if not question.get("answerable", True) or not strings:
        return None
    text = normalize((answer or "").replace("**", "").replace("`", ""))
    return sum(1 for s in strings if normalize(s) in text) / len(strings)


# --------------------------------------------------------------------------------------------------------------
# Numbers in an answer


def numbers_in(text: str) -> list[tuple[float, float | None, bool]]:
    """(number, scale factor named after it or None, followed by %) for every figure in an answer.

    The number is negative when written with a minus sign or in parentheses ("-$1,234", "($1,234)"); labels that
    are not figures (dates, citation markers, fiscal periods, Items) are skipped.
    """
    out = []
    for m in _FIGURE.finditer(_LABELS.sub(" ", text or "")):
        try:
            value = float(m.group("num").replace(",", ""))
        except ValueError:
            continue
        negative = bool(m.group("sign")) or bool(m.group("paren"))
        word = re.sub(r"\s", "", (m.group("word") or "").lower())
        pct = word in ("%", "percent")
        scale = None if pct or not word else _SCALE_WORDS.get(word.rstrip("s") if len(word) > 2 else word)
        out.append((-value if negative else value, scale, pct))
    return out


def figures_in_unit(answer: str, unit: str | None) -> list[float]:
    """Every magnitude the answer states that can be read in the question's unit.

    The rule: signs are dropped (a loss or an outflow may be written negative, in parentheses or as "a net loss
    of"); a scale word converts to the unit ("$1.2 billion" is 1,200 USD millions, "12.6 billion shares" is
    12,600,000,000 shares); a bare number is read in the unit, as filing tables print it, or for a USD unit also
    as whole dollars ("$61,518,000,000" is 61,518 USD millions); a percentage counts only for a `percent` unit, and
    a number with a scale word never does. A unit that opens with a scale word ("million square feet"), or closes
    with one as "USD millions" does ("shares millions"), reads figures in that scale. Any other unit (shares,
    employees, USD per share) is a plain count.
    """
    money = _MONEY_UNIT.fullmatch((unit or "").strip())
    unit = (unit or "").strip().lower()
    base = _MONEY_SCALE[money.group(1) and money.group(1).lower()] if money else None
    first_word = unit.split(" ", 1)[0]
    if base is None and first_word in ("thousand", "million", "billion", "trillion"):
        base = _SCALE_WORDS[first_word]  # "million square feet", "thousand employees": a scaled count
    last_word = unit.rsplit(" ", 1)[-1]
    if base is None and " " in unit and last_word in _MONEY_SCALE:
        base = _MONEY_SCALE[last_word]  # "shares millions", written as "USD millions" is: a count in that scale
    out: list[float] = []
    for number, scale, pct in numbers_in(answer):
        number = abs(number)
        if unit == "percent":
            if scale is None:
                out.append(number)
        elif pct:
            continue
        elif base is None:
            out.append(number * scale if scale else number)
        elif scale:
            out.append(number * scale / base)
        else:
            out.extend([number, number / base] if base > 1 else [number])
    return out


_OPERATORS = "+-\u2212\u2013\u00d7*/\u00f7"
_RESULT_SIGNS = "=\u2248"


def _arithmetic_start(text: str, at: int) -> int:
    """Where the arithmetic that ends at text[at] (an "=" or "≈") begins: walking left over figures, operators,
    parentheses, "$", "%", blanks, scale words ("million") and the separators inside a number ("1,250.5")."""
    j = at - 1
    while j >= 0:
        ch = text[j]
        if ch.isdigit() or ch in _OPERATORS or ch in "()$% \t":
            j -= 1
        elif ch in ",." and 0 < j < len(text) - 1 and text[j - 1].isdigit() and text[j + 1].isdigit():
            j -= 1
        elif ch.isalpha():
            k = j
            while k >= 0 and text[k].isalpha():
                k -= 1
            word = text[k + 1 : j + 1].lower()
            if word not in _SCALE_WORDS and word.rstrip("s") not in _SCALE_WORDS:
                break
            j = k
        else:
            break
    return j + 1


def without_operands(answer: str) -> str:
    """The answer with the operands of its arithmetic blanked: in "A + B = C" only C is stated as a result, so a
    figure counts where the answer states it, not where it is an input to a sum that ends elsewhere. A span counts as
    arithmetic only when an operator stands between two of its figures."""
    text = answer or ""
    out = list(text)
    for at, ch in enumerate(text):
        if ch not in _RESULT_SIGNS:
            continue
        start = _arithmetic_start(text, at)
        span = text[start:at]
        digits = [i for i, c in enumerate(span) if c.isdigit()]
        if digits and any(c in _OPERATORS for c in span[digits[0] + 1 : digits[-1]]):
            out[start:at] = " " * (at - start)
    return "".join(out)


def _within(stated: float, target: float, tolerance: float) -> bool:
    target = abs(target)
    return abs(stated - target) <= max(tolerance, 1e-9) * max(target, 1e-9)


def distractor_stated(answer: str, distractors, unit: str | None, tolerance: float) -> bool:
    """The answer states a figure within tolerance of a distractor (by magnitude, in the same unit); an operand of
    arithmetic that ends in another figure is not stated (without_operands)."""
    stated = figures_in_unit(without_operands(answer), unit)
    return any(_within(s, float(d), tolerance) for d in distractors or () for s in stated)


def numeric_correct(answer: str, value: float, unit: str | None, tolerance: float, distractors=()) -> bool:
    """A figure the answer states within tolerance of the reference value by magnitude (units normalised, see
    figures_in_unit), and none within tolerance of a distractor. A figure counts where the answer states it, not
    as an operand of arithmetic that ends in another figure ("A + B = C" states C; see without_operands)."""
    stated = figures_in_unit(without_operands(answer), unit)
    if not any(_within(s, value, tolerance) for s in stated):
        return False
    return not distractor_stated(answer, distractors, unit, tolerance)


# --------------------------------------------------------------------------------------------------------------
# Retrieved chunks against the gold filings


def _field(name: str, value):
    if value is None or value == "":
        return None
    if name == "fiscal_year":
        try:
            return int(value)
        except (TypeError, ValueError):
            return None
    return str(value).strip().upper()


def chunk_filing(metadata) -> dict:
    """The filing a chunk comes from, in the fields a gold filing names.

    A chunk indexed before fiscal periods were recorded has no fiscal_period: an annual report (10-K and its
    variants) covers the whole fiscal year, "FY" in the dei convention; a quarterly report's quarter is unknown and
    stays None, so it matches no gold filing that names a period.
    """
    filing = {name: _field(name, metadata.get(name)) for name in FILING_FIELDS}
    if filing["fiscal_period"] is None and (filing["form"] or "").startswith("10-K"):
        filing["fiscal_period"] = "FY"
    return filing


def filing_matches(gold: dict, filing: dict) -> bool:
    """Every field the gold filing gives matches the chunk's filing (chunk_filing)."""
    given = [name for name in FILING_FIELDS if _field(name, gold.get(name)) is not None]
    return bool(given) and all(filing[name] == _field(name, gold.get(name)) for name in given)


def from_gold_filing(question: dict, metadata) -> bool:
    filing = chunk_filing(metadata)
    return any(filing_matches(gold, filing) for gold in question.get("filings") or [])


def _node(item):
    return getattr(item, "node", item)


def _text(node) -> str:
    get_content = getattr(node, "get_content", None)
    return get_content() if callable(get_content) else getattr(node, "text", "") or ""


def _precision(gold_flags: list[bool], k: int, has_gold: bool) -> float | None:
    if not has_gold:
        return None
    top = gold_flags[:k]
    return sum(top) / len(top) if top else 0.0


def score_retrieval(question: dict, nodes: list) -> dict:
    """Evidence recall@5/@10, filing precision@5/@10, the reciprocal rank of the first gold chunk holding a piece
    of evidence, and the rank at which each piece was first found (None: not retrieved)."""
    pieces = question.get("evidence") or []
    gold_flags = [from_gold_filing(question, _node(n).metadata) for n in nodes]
    first_rank: list[int | None] = [None] * len(pieces)
    for rank, (item, gold) in enumerate(zip(nodes, gold_flags), 1):
        if not gold:
            continue
        text = _text(_node(item))
        for i, piece in enumerate(pieces):
            if first_rank[i] is None and evidence_found(piece, text):
                first_rank[i] = rank
    row: dict = {}
    for k in (5, 10):
        row[f"evidence_recall@{k}"] = (sum(1 for r in first_rank if r is not None and r <= k) / len(pieces)
                                      if pieces else None)
    has_gold = bool(question.get("filings"))
    row["filing_precision@5"] = _precision(gold_flags, 5, has_gold)
    row["filing_precision@10"] = _precision(gold_flags, 10, has_gold)
    found = [r for r in first_rank if r is not None]
    row["rr"] = (1.0 / min(found) if found else 0.0) if pieces else None
    row["evidence_found"] = [{"piece": list(piece), "rank": rank} for piece, rank in zip(pieces, first_rank)]
    row.update(score_pages(question, nodes, gold_flags))
    return row


def score_pages(question: dict, nodes: list, gold_flags: list[bool] | None = None) -> dict:
    """For a question over PDFs that names its `evidence_pages` (1-based PDF pages): page hit@5/@10, a top-k chunk
    from a gold filing whose page span covers one of those pages (as FinanceBench is scored), and doc hit@5, a
    top-5 chunk from a gold filing. None for a question without pages."""
    pages = {int(p) for p in question.get("evidence_pages") or []}
    if not pages:
        return {"page_hit@5": None, "page_hit@10": None, "doc_hit@5": None}
    if gold_flags is None:
        gold_flags = [from_gold_filing(question, _node(n).metadata) for n in nodes]

    def covers(metadata) -> bool:
        start, end = metadata.get("page_start"), metadata.get("page_end")
        if start is None:
            return False
        end = start if end is None else end
        return any(int(start) <= p <= int(end) for p in pages)

    hits = [gold and covers(_node(n).metadata) for n, gold in zip(nodes, gold_flags)]
    return {"page_hit@5": any(hits[:5]), "page_hit@10": any(hits[:10]), "doc_hit@5": any(gold_flags[:5])}


def _file_name(metadata) -> str | None:
    where = str(metadata.get("path") or metadata.get("source") or "")
    return re.split(r"[/\\]", where.rstrip("/\\"))[-1] or None


def retrieved_chunks(question: dict, nodes: list) -> list[dict]:
    """What was retrieved, rank by rank, so a miss can be read without re-running: where each chunk comes from,
    its score, and whether it is from a gold filing. fiscal_period is the chunk's own (None when not recorded)."""
    rows = []
    for rank, item in enumerate(nodes, 1):
        m = _node(item).metadata
        start, end = m.get("page_start"), m.get("page_end")
        rows.append({
            "rank": rank, "file": _file_name(m), "ticker": m.get("ticker"), "form": m.get("form"),
            "fiscal_year": m.get("fiscal_year"), "fiscal_period": m.get("fiscal_period"), "section": m.get("section"),
            "page": start, "pages": None if start is None else f"{start}-{end if end is not None else start}",
            "score": round(float(getattr(item, "score", 0.0) or 0.0), 4),
            "gold_filing": from_gold_filing(question, m),
        })
    return rows


# --------------------------------------------------------------------------------------------------------------
# What the model did, read from the answer and from Ollama's own counts


class OllamaCounts(BaseEventHandler):
    """The counts Ollama reports on the done line of each streamed chat (prompt_eval_count, eval_count and their
    durations), read through llama-index's instrumentation as the answer's stream passes them: the same for a real
    Ollama and for any server that speaks its API. Use as a context manager around the answers it should see."""

    seen: list[dict] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "OllamaCounts"

    def handle(self, event, **kwargs) -> None:
        if not isinstance(event, LLMChatInProgressEvent):
            return
        raw = getattr(event.response, "raw", None)
        if isinstance(raw, dict) and raw.get("done"):
            self.seen.append({key: raw.get(key) for key in ("prompt_eval_count", "eval_count",
                                                             "prompt_eval_duration", "eval_duration")})

    def __enter__(self) -> OllamaCounts:
        get_dispatcher().add_event_handler(self)
        return self

    def __exit__(self, *exc) -> None:
        handlers = get_dispatcher().event_handlers
        if self in handlers:
            handlers.remove(self)


def unsupported_count(result) -> int:
    """Claim sentences the answer path flagged as unsupported by the passage they cite: its `unsupported_claims`
    when the result carries them, else its warnings that say a citation does not support a claim."""
    flagged = getattr(result, "unsupported_claims", None)
    if flagged is not None:
        return len(flagged)
    return sum(1 for w in result.warnings or [] if "does not support" in w)


def llm_fields(result, counts: dict | None) -> dict:
    """A row's figures of the model's answer: whether the model wrote it, the wait for the answer's first words and
    for the model's own, Ollama's prompt and answer token counts (for every answer the model was asked for, kept or
    replaced by the quoted passages), its citations (kept, and removed for naming no source), claims flagged as
    unsupported, and placeholder markers ("[n]") left in the text."""
    by_model = bool(result.model) and not result.extractive
    first_ms = (result.timings or {}).get("first_token_ms")
    model_ms = (result.timings or {}).get("model_first_token_ms")
    text = result.answer or ""
    given = {c.number for c in result.sources}
    named = [n for m in CITATION_MARKER.finditer(text) for n in citation_numbers(m.group(1))]
    removed = sum(1 for w in result.warnings or [] if w.startswith("Removed citation"))
    return {
        "llm_answered": by_model,
        "first_token_s": round(first_ms / 1000, 3) if by_model and first_ms is not None else None,
        "model_first_token_s": round(model_ms / 1000, 3) if model_ms is not None else None,
        "prompt_tokens": (counts or {}).get("prompt_eval_count"),
        "eval_tokens": (counts or {}).get("eval_count"),
        "citations_kept": sum(1 for n in named if n in given),
        "citations_removed": removed,
        "unsupported": unsupported_count(result),
        "placeholder_left": "[n]" in text,
        "cut": bool(getattr(result, "cut", False)),
    }


def _percentile(values, q: float) -> float | None:
    values = [v for v in values if v is not None]
    return round(float(np.percentile(values, q)), 3) if values else None


def llm_summary(rows: list[dict], model: str) -> dict:
    """The model's figures over a run: numeric answers right, refusals right, answers citing at least one source,
    citations resolving, unsupported claims flagged, placeholders left, prompt tokens and time to first token."""
    numeric = [r for r in rows if r.get("value_scored")]
    refusals = [r for r in rows if r["kind"] == "refusal"]
    answered = [r for r in rows if not r["refused"]]
    by_model = [r for r in rows if r.get("llm_answered")]
    kept = sum(r.get("citations_kept", 0) for r in rows)
    removed = sum(r.get("citations_removed", 0) for r in rows)
    return {
        "llm_model": model if by_model else None,
        "llm_answers": len(by_model),
        "numeric_right": sum(1 for r in numeric if r["answer_correct"]),
        "numeric_questions": len(numeric),
        "refusals_right": sum(1 for r in refusals if r["answer_correct"]),
        "refusal_questions": len(refusals),
        "cited_answer_rate": round(sum(1 for r in answered if r["cited_filings"]) / len(answered), 4)
        if answered else None,
        "citations_resolving": round(kept / (kept + removed), 4) if kept + removed else None,
        "unsupported_flagged": sum(r.get("unsupported", 0) for r in rows),
        "placeholder_left": sum(1 for r in rows if r.get("placeholder_left")),
        "prompt_tokens_p50": _percentile([r.get("prompt_tokens") for r in rows], 50),
        "prompt_tokens_p95": _percentile([r.get("prompt_tokens") for r in rows], 95),
        "first_token_s_p50": _percentile([r.get("first_token_s") for r in by_model], 50),
        "first_token_s_p95": _percentile([r.get("first_token_s") for r in by_model], 95),
        "model_first_token_s_p50": _percentile([r.get("model_first_token_s") for r in rows], 50),
        "model_first_token_s_p95": _percentile([r.get("model_first_token_s") for r in rows], 95),
    }


# --------------------------------------------------------------------------------------------------------------
# One question's row


def score_answer(question: dict, answer: str, refused: bool, cited: bool) -> dict:
    """answer_correct (None for prose answers, not scored automatically) and distractor_stated (None when the
    question lists no distractors)."""
    distractors = question.get("distractors") or []
    unit, tolerance = question.get("unit"), float(question.get("tolerance") or 0.0)
    stated = distractor_stated(answer, distractors, unit, tolerance) if distractors else None
    if not question.get("answerable", True):
        correct = refused and not cited
    elif question.get("value") is not None:
        correct = (not refused) and numeric_correct(answer, float(question["value"]), unit, tolerance, distractors)
    else:
        correct = None
    return {"answer_correct": correct, "distractor_stated": stated,
            "answer_evidence": answer_evidence(question, answer)}


def question_row(question: dict, nodes: list, result) -> dict:
    """The report row of one question: retrieval scores, the answer's score and what was retrieved."""
    row = {"id": question["id"], "kind": question["kind"], "question": question.get("question"),
           **score_retrieval(question, nodes)}
    row["answer"] = result.answer
    row.update(score_answer(question, result.answer or "", bool(result.refused), bool(result.citations)))
    row["value_scored"] = question.get("value") is not None and question.get("answerable", True)
    row.update(
        refused=bool(result.refused),
        cited_filings=sorted({f"{c.ticker} {c.form} {period_label(c.fiscal_year, c.fiscal_period)}"
                              for c in result.citations}),
        retrieved=retrieved_chunks(question, nodes),
    )
    return row


# --------------------------------------------------------------------------------------------------------------
# Splitting a set by company, for tuning on one half and reporting on the other


def _stable_half(key: str) -> str:
    return "tune" if hashlib.sha256(key.encode("utf-8")).digest()[0] % 2 == 0 else "blind"


def company_halves(questions: list[dict]) -> dict[str, str]:
    """Each gold ticker of the set -> "tune" or "blind", by a stable hash of the ticker alone: a company falls in
    the same half in every question set, so a company tuned on in one set is never the blind half of another."""
    tickers = sorted({str(f["ticker"]).upper() for q in questions for f in q.get("filings") or [] if f.get("ticker")})
    return {t: _stable_half(t) for t in tickers}


def question_half(question: dict, halves: dict[str, str]) -> str:
    """The half of the question's first gold filing's company; a question without one goes by a stable hash of
    its id (Python's hash() is salted per process, so not that)."""
    filings = question.get("filings") or []
    ticker = str(filings[0].get("ticker") or "").upper() if filings else ""
    return halves.get(ticker) or _stable_half(str(question.get("id")))


def split_questions(questions: list[dict], split: str = "all") -> tuple[list[dict], list[str]]:
    """The questions of one half of the set's companies, and those companies (sorted)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    halves = company_halves(questions)
    if split == "all":
        return list(questions), sorted(halves)
    return ([q for q in questions if question_half(q, halves) == split],
            sorted(t for t, half in halves.items() if half == split))


def load_questions(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# --------------------------------------------------------------------------------------------------------------
# Running and summarising


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(float(np.mean(values)), 4) if values else None


def run_questions(
    path: Path, settings: Settings, *, mode: str = "hybrid", top_k: int = 10, use_llm: bool = False,
    use_analysis: bool = True, split: str = "all", filters: Filters | None = None, use_history: bool = True,
    ids: list[str] | None = None, kinds: list[str] | None = None, progress=None,
) -> dict:
    """`filters`: the user's own filters, applied to every question (e.g. one fiscal period). A question's `history`
    (its conversation's earlier questions, oldest first) is asked with it unless `use_history` is off, which asks
    every question on its own (to measure what the conversation adds). `ids` and `kinds`: only those questions
    (a model's run on a CPU may take minutes a question). `progress(row)` is told each question's row as it is
    scored. With `use_llm` the report also holds the model's figures (llm_summary)."""
    engine = Engine(settings)
    if not len(engine.index()):
        raise SystemExit("the index is empty: index the filings first (python -m rag index PATH)")
    everything = load_questions(path)
    questions, companies = split_questions(everything, split)
    questions = [q for q in questions if (not ids or q["id"] in ids) and (not kinds or q["kind"] in kinds)]
    engine.warm(mode)  # model, index and fact views loaded before timing
    rows = []
    history_used = use_history and any(q.get("history") for q in questions)
    with OllamaCounts() as counts:
        for q in questions:
            retrieval = engine.retrieve(q["question"], mode=mode, top_k=top_k, use_analysis=use_analysis,
                                        for_llm=use_llm, generated_queries=None if use_llm else 0, filters=filters,
                                        history=list(q.get("history") or []) if use_history else None)
            seen = len(counts.seen)
            # Through the engine, as the app and the CLI answer: exact XBRL figures first (the facts layer).
            result = engine.answer_stream_for(answered_question(q["question"], retrieval), retrieval,
                                              use_llm=use_llm, filters=filters).consume()
            row = question_row(q, retrieval.nodes[:retrieval.shown], result)  # what the Sources list shows
            row.update(detected=retrieval.plan.label(), retrieval_ms=round(retrieval.retrieval_ms, 2))
            if use_llm:
                row.update(llm_fields(result, counts.seen[-1] if len(counts.seen) > seen else None))
            if progress is not None:
                progress(row)
            rows.append(row)
    report = summarize(rows, mode=mode, top_k=top_k, use_analysis=use_analysis, use_llm=use_llm,
                       fusion=settings.fusion + (f" {settings.fusion_weights}" if settings.fusion_weights else ""),
                       split=split, split_companies=companies, questions_in_set=len(everything),
                       history_used=history_used)
    if use_llm:
        summary = llm_summary(rows, settings.llm_model)
        report.update(summary, llm_context=settings.llm_context_window, ollama=settings.ollama_url)
    return report


def _block(subset: list[dict]) -> dict:
    scored = [r for r in subset if r["answer_correct"] is not None]
    return {
        "count": len(subset),
        "evidence_recall@5": _mean(r["evidence_recall@5"] for r in subset),
        "evidence_recall@10": _mean(r["evidence_recall@10"] for r in subset),
        "filing_precision@5": _mean(r["filing_precision@5"] for r in subset),
        "filing_precision@10": _mean(r.get("filing_precision@10") for r in subset),
        "mrr": _mean(r["rr"] for r in subset),
        "answer_accuracy": _mean(float(r["answer_correct"]) for r in scored),
        "answer_scored": len(scored),
        "answer_evidence": _mean(r.get("answer_evidence") for r in subset),
        "distractor_stated": sum(1 for r in subset if r.get("distractor_stated")),
    }


def _page_hits(rows: list[dict]) -> dict:
    """page hit@5/@10 and doc hit@5 over the questions that name evidence pages; nothing when none does."""
    paged = [r for r in rows if r.get("page_hit@5") is not None]
    if not paged:
        return {}
    return {key: _mean(float(r[key]) for r in paged) for key in ("page_hit@5", "page_hit@10", "doc_hit@5")}


def summarize(rows: list[dict], **info) -> dict:
    latencies = np.array([r["retrieval_ms"] for r in rows]) if rows else np.zeros(1)
    answerable = [r for r in rows if r["kind"] != "refusal"]
    refusals = [r for r in rows if r["kind"] == "refusal"]
    scored = [r for r in rows if r["answer_correct"] is not None]
    by_kind = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    overall = _block(answerable)
    kinds = list(KINDS) + sorted(k for k in by_kind if k not in KINDS)
    return {
        **info,
        "questions_total": len(rows),
        "evidence_recall@5": overall["evidence_recall@5"],
        "evidence_recall@10": overall["evidence_recall@10"],
        "filing_precision@5": overall["filing_precision@5"],
        "filing_precision@10": overall["filing_precision@10"],
        "mrr": overall["mrr"],
        "answer_accuracy": _mean(float(r["answer_correct"]) for r in scored),
        "refusal_accuracy": _mean(float(r["answer_correct"]) for r in refusals),
        "answer_evidence": overall["answer_evidence"],
        # The same over the answers in prose (answerable questions without a reference number).
        "prose_answer_evidence": _mean(r.get("answer_evidence") for r in answerable if not r.get("value_scored")),
        # Answerable questions with a reference number only (refusals and prose answers left out).
        "numeric_accuracy": _mean(float(r["answer_correct"]) for r in answerable if r["answer_correct"] is not None),
        **_page_hits(rows),
        # Every kind FORMAT.md defines (None when the set has none of it scored), then any other kind present.
        "answer_accuracy_by_kind": {
            kind: _mean(float(r["answer_correct"]) for r in by_kind.get(kind, []) if r["answer_correct"] is not None)
            for kind in kinds
        },
        "distractor_questions": sum(1 for r in rows if r.get("distractor_stated") is not None),
        "distractor_stated": sum(1 for r in rows if r.get("distractor_stated")),
        "latency_ms": {"p50": round(float(np.percentile(latencies, 50)), 2),
                       "p95": round(float(np.percentile(latencies, 95)), 2)},
        "by_kind": {kind: _block(subset) for kind, subset in sorted(by_kind.items())},
        "questions": rows,
    }


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def print_report(report: dict) -> None:
    keys = [k for k in ("evidence_recall@5", "evidence_recall@10", "filing_precision@5", "filing_precision@10", "mrr",
                        "answer_accuracy", "numeric_accuracy", "refusal_accuracy", "answer_evidence",
                        "prose_answer_evidence", "page_hit@5",
                        "page_hit@10", "doc_hit@5") if k in report]
    info = {k: report[k] for k in ("mode", "top_k", "use_analysis", "use_llm", "split", "history_used")
            if k in report}
    print("settings: " + ", ".join(f"{k}={v}" for k, v in info.items()))
    if "split_companies" in report:
        print(f"companies: {' '.join(report['split_companies']) or '-'}  "
              f"({report['questions_total']} of {report.get('questions_in_set', '?')} questions)")
    for key in keys:
        print(f"{key:<20} {report[key]}")
    if report.get("distractor_questions"):
        print(f"{'distractor_stated':<20} {report['distractor_stated']} of {report['distractor_questions']}")
    print(f"{'latency_ms':<20} p50 {report['latency_ms']['p50']}  p95 {report['latency_ms']['p95']}")
    if report.get("llm_answers") is not None:
        print_llm_report(report)
    if report.get("by_kind"):
        print(f"\n{'kind':<14} {'n':>3} {'rec@5':>6} {'rec@10':>6} {'prec@5':>6} {'mrr':>6} {'acc':>6} {'ans_ev':>6} {'dstr':>4}")
        for kind, b in report["by_kind"].items():
            print(f"{kind:<14} {b['count']:>3} {_fmt(b['evidence_recall@5']):>6} {_fmt(b['evidence_recall@10']):>6} "
                  f"{_fmt(b['filing_precision@5']):>6} {_fmt(b['mrr']):>6} {_fmt(b['answer_accuracy']):>6} "
                  f"{_fmt(b.get('answer_evidence')):>6} {b.get('distractor_stated', 0):>4}")


def print_llm_report(report: dict) -> None:
    """The model's figures (llm_summary), beside the run's own."""
    print(f"\nmodel: {report['llm_model'] or '- (no answer came from a model)'} at {report.get('ollama')} "
          f"(context {report.get('llm_context')}), {report['llm_answers']} of {report['questions_total']} answers "
          "written by it")
    print(f"{'numeric right':<20} {report['numeric_right']} of {report['numeric_questions']}")
    print(f"{'refusals right':<20} {report['refusals_right']} of {report['refusal_questions']}")
    for key in ("cited_answer_rate", "citations_resolving", "unsupported_flagged", "placeholder_left"):
        print(f"{key:<20} {'-' if report[key] is None else report[key]}")
    print(f"{'prompt_tokens':<20} p50 {report['prompt_tokens_p50']}  p95 {report['prompt_tokens_p95']}")
    print(f"{'first_token_s':<20} p50 {report['first_token_s_p50']}  p95 {report['first_token_s_p95']}")
    print(f"{'model_first_token_s':<20} p50 {report['model_first_token_s_p50']}  "
          f"p95 {report['model_first_token_s_p95']}")


# --------------------------------------------------------------------------------------------------------------
# FinanceBench: one shared store over all its PDFs


def financebench_ticker(document: dict) -> str:
    """The ticker a FinanceBench PDF is indexed under (its covers of before 2019 print none): the company's name,
    letters and digits only."""
    return re.sub(r"[^A-Z0-9]", "", document["company"].upper())[:12] or document["doc_name"].split("_")[0]


def financebench_questions(folder: Path, split: str = "all") -> tuple[dict, list[dict], list[str], int]:
    """(documents by name, the questions of one half of the companies, those companies, questions in the set).
    Companies are halved by the ticker they are indexed under, as the question sets are."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    documents = {d["doc_name"]: d for d in map(json.loads, open(folder / "documents.jsonl", encoding="utf-8"))}
    questions = [json.loads(line) for line in open(folder / "questions.jsonl", encoding="utf-8") if line.strip()]
    half = {name: _stable_half(financebench_ticker(doc)) for name, doc in documents.items()}
    chosen = [q for q in questions if split == "all" or half.get(q["doc_name"]) == split]
    companies = sorted({financebench_ticker(documents[q["doc_name"]]) for q in chosen if q["doc_name"] in documents})
    return documents, chosen, companies, len(questions)


def on_evidence_page(meta: dict, gold_doc: str | None, pages: set[int]) -> bool:
    """A passage of the gold PDF whose page span covers one of the evidence pages (1-based)."""
    return meta.get("doc_id") == gold_doc and any(meta["page_start"] <= p <= meta["page_end"] for p in pages)


def run_financebench(folder: Path, settings: Settings, *, mode: str = "hybrid", top_k: int = 10,
                     progress=None, use_analysis: bool = True, split: str = "all") -> dict:
    """Page and document hits of FinanceBench's questions over its PDFs (indexed first where they are not);
    `split`: one half of its companies only."""
    documents, questions, companies, in_set = financebench_questions(folder, split)
    if settings.storage_dir.resolve() == Settings().storage_dir.resolve():
        settings = settings.with_overrides(storage_dir=settings.storage_dir / "financebench")
    store = open_store(settings)
    # Held by the current chunker and model; a PDF indexed by an older one is brought up to date (and re-embeds only
    # its changed chunks).
    indexed_paths = {Path(f.get("path") or "").name for f in store.list_filings()
                     if f.get("fingerprint") == store.fingerprint}
    for name, doc in documents.items():
        pdf = folder / "pdfs" / f"{name}.pdf"
        if not pdf.exists() or pdf.name in indexed_paths:
            continue
        store.add([pdf], progress=progress, overrides={
            "ticker": financebench_ticker(doc),
            "company": doc["company"], "form": "10-K", "fiscal_year": doc.get("doc_period"),
        })
    engine = Engine(settings)
    by_path = {Path(f["path"]).stem: f["doc_id"] for f in engine.index().filings.values()}
    engine.warm(mode)
    rows = []
    for q in questions:
        gold_doc = by_path.get(q["doc_name"])
        pages = {int(e["evidence_page_num"]) + 1 for e in q.get("evidence", [])}
        retrieval = engine.retrieve(q["question"], mode=mode, top_k=top_k, use_analysis=use_analysis)
        row = {"id": q.get("financebench_id"), "doc_name": q["doc_name"], "retrieval_ms": retrieval.retrieval_ms}
        for k in (5, 10):
            top = [n.node.metadata for n in retrieval.nodes[:k]]
            row[f"page_hit@{k}"] = any(on_evidence_page(m, gold_doc, pages) for m in top)
        row["doc_hit@5"] = any(n.node.metadata.get("doc_id") == gold_doc for n in retrieval.nodes[:5])
        row["detected"] = retrieval.plan.label()
        rows.append(row)
    lat = np.array([r["retrieval_ms"] for r in rows]) if rows else np.zeros(1)
    return {
        "mode": mode, "top_k": top_k, "use_analysis": use_analysis, "split": split, "split_companies": companies,
        "questions_in_set": in_set, "storage": str(settings.storage_dir),
        "fusion": settings.fusion + (f" {settings.fusion_weights}" if settings.fusion_weights else ""),
        "questions_total": len(rows),
        "page_hit@5": _mean(float(r["page_hit@5"]) for r in rows),
        "page_hit@10": _mean(float(r["page_hit@10"]) for r in rows),
        "doc_hit@5": _mean(float(r["doc_hit@5"]) for r in rows),
        "latency_ms": {"p50": round(float(np.percentile(lat, 50)), 2), "p95": round(float(np.percentile(lat, 95)), 2)},
        "questions": rows,
    }
