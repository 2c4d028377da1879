"""Figures in answers and sources: which written numbers are figures worth checking, deciding whether two are the
same figure, recomputing arithmetic written in the answer, and the final check of an answer's citations
and figures against the sources it cites (`check_citations`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from ..dates import MONTH_PATTERN
from ..lexicon import word_set
from ..numbers import WrittenNumber, parse_numbers, worth_checking
from ..schema import Citation
from .citations import CITATION_BODY, CITATION_MARKER, citation_numbers
from .support import unsupported_claims, unsupported_warning

_FACTORS = (1e-9, 1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9)


def same_number(a: WrittenNumber, b: WrittenNumber) -> bool:
    """Does b (from a source) support a (from the answer)? Absolute values; an unwritten scale may be any power
    of 1000 ("$52.4 billion" ~ "52,418" in a table in millions); a difference below one unit of the last
    written digit of either number counts as the same figure (rounding or truncation)."""
    av = a.value * a.scale
    if a.pct or b.pct:
        factors: tuple[float, ...] = (1.0,)
    elif a.scaled and b.scaled:
        factors = (1.0,)
    else:
        factors = _FACTORS
    for f in factors:
        if f != 1.0 and _significant_digits(b) < 3:
            continue  # "8" (as in "Item 8") is not "$8 billion"
        bv = b.value * b.scale * f
        # The answer's precision; a source's own rounding only when it wrote a scale ("$96.8 billion").
        tol = max(a.ulp * a.scale, b.ulp * b.scale * f if b.scaled else 0.0)
        if abs(av - bv) < tol * 0.999 + 1e-9 * max(av, bv):
            return True
    return False


def _significant_digits(n: WrittenNumber) -> int:
    digits = re.sub(r"\D", "", n.raw)
    return len(digits.lstrip("0"))


_NUMBERED_LABELS = word_set("numbered_labels")
_SKIP_SPANS = [
    re.compile(r"\[\s*" + CITATION_BODY + r"\s*\]", re.IGNORECASE),
    re.compile(r"\b" + MONTH_PATTERN + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?", re.IGNORECASE),
    re.compile(r"\b\d{1,2}\s+" + MONTH_PATTERN + r"\.?(?:,?\s+\d{4})?", re.IGNORECASE),
    re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"),
    # A number that a label's word numbers ("Item 7", "Notes 4 and 5", "ASC 842", "Level 3", "Series B-1"): the
    # words are rag/data/lexicon.toml's numbered_labels, a span read only when its word is one of them.
    re.compile(r"\b(?P<label>[a-z]+\.?)\s*\d[\w.\-–]*(?:\s*(?:-|–|to|and|,)\s*\d[\w.\-–]*)*", re.IGNORECASE),
    re.compile(r"(?m)^\s*\d{1,2}[.)]\s"),
    re.compile(r"\b10-[KQ]\b|\b8-K\b|\b401\(k\)", re.IGNORECASE),
]


def _blank(text: str, patterns) -> str:
    chars = list(text)
    for rx in patterns:
        for m in rx.finditer(text):
            if "label" in rx.groupindex and m.group("label").lower() not in _NUMBERED_LABELS:
                continue
            for i in range(m.start(), m.end()):
                if chars[i] != "\n":
                    chars[i] = " "
    return "".join(chars)


def answer_figures(text: str) -> list[WrittenNumber]:
    """Figures in an answer worth checking: not citation markers, dates, years, Item/Note numbers, list numbers."""
    return [n for n in parse_numbers(_blank(text, _SKIP_SPANS)) if worth_checking(n)]


# ---- arithmetic written in the answer: "(52,418 - 47,305) / 47,305 = 10.8%"

_EXPR_LEFT = re.compile(
    r"((?:[\d$(),.\s+\-−–*/×÷%]|million|billion|thousand)+)$", re.IGNORECASE
)
_EXPR_RIGHT = re.compile(
    r"\s*(\(?[-−–]?\$?\s?\d[\d,]*(?:\.\d+)?\)?\s*(?:%|percent\b|thousand\b|million\b|billion\b)?)", re.IGNORECASE
)


def _safe_eval(expr: str) -> float | None:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None

    def ev(node) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            return a / b
        raise ValueError("not arithmetic")

    try:
        return ev(tree)
    except (ValueError, ZeroDivisionError, RecursionError):
        return None


def _eval_expression(expr_text: str) -> float | None:
    expr = re.sub(r"(?i)\s*(million|billion|thousand)\b", "", expr_text)
    expr = expr.replace("$", "").replace(",", "").replace("×", "*").replace("÷", "/")
    expr = expr.replace("−", "-").replace("–", "-").replace("%", "/100")
    if not re.search(r"\d\s*\)?\s*[+\-*/]\s*\(?\s*\d", expr):
        return None  # no operator between numbers: "revenue = 48,210" is a statement, not arithmetic
    return _safe_eval(expr)


def check_arithmetic(text: str) -> tuple[list[tuple[int, int]], list[str]]:
    """Recompute `expression = result` written in the text ("(52,418 - 47,305) / 47,305 = 10.8%"). Returns
    (spans of results that check out, warnings for those that do not)."""
    ok_spans: list[tuple[int, int]] = []
    warnings: list[str] = []
    clean = _blank(text, _SKIP_SPANS[:1])  # citation markers out
    for eq in re.finditer(r"=|≈|~", clean):
        left = _EXPR_LEFT.search(clean[: eq.start()])
        right = _EXPR_RIGHT.match(clean, eq.end())
        if not left or not right:
            continue
        region = left.group(1)
        expr_text, value = "", None
        # The longest arithmetic that ends at the "=" (the region may begin with unrelated figures).
        for start in (m.start() for m in re.finditer(r"(?<![\d.,])[\d$(]", region)):
            candidate = region[start:].strip()
            while candidate.count("(") > candidate.count(")") and candidate.startswith("("):
                candidate = candidate[1:].strip()
            if candidate.count("(") != candidate.count(")"):
                continue
            value = _eval_expression(candidate)
            if value is not None:
                expr_text = candidate
                break
        if value is None:
            continue
        results = parse_numbers(right.group(1))
        if not results:
            continue
        r = results[0]
        calc = WrittenNumber(abs(value), 1e-9, 1.0, False, False, False, expr_text, 0, 0)
        candidates = [calc]
        if r.pct:
            candidates.append(replace(calc, value=abs(value) * 100))
        r_plain = replace(r, pct=False)
        if any(same_number(r_plain, c) for c in candidates):
            ok_spans.append((right.start(1), right.end(1)))
        else:
            shown = f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
            if r.pct:
                shown += f" ({value * 100:,.2f}%)"
            warnings.append(f"Arithmetic does not check out: {expr_text} = {shown}, but the answer says {r.raw}.")
    return ok_spans, warnings


def check_citations(
    text: str, sources: list[Citation], *, question: str = "", unsupported: list[str] | None = None
) -> tuple[list[int], list[str], list[str]]:
    """(cited numbers that name given sources, warnings, unverified figures) for a final answer text.
    Figures are checked against the sources the answer cites (and the question itself); a claim sentence whose
    cited sources share none of its content words is warned about too (rag.answer.support), and added to
    `unsupported` when a list is given."""
    by_number = {c.number: c for c in sources}
    cited: list[int] = []
    invalid: list[int] = []
    for m in CITATION_MARKER.finditer(text):
        for n in citation_numbers(m.group(1)):
            if n in by_number:
                if n not in cited:
                    cited.append(n)
            elif n not in invalid:
                invalid.append(n)
    warnings = [
        f"Removed citation [{n}]: no source {n} was given to the model." for n in invalid
    ]
    ok_spans, arith_warnings = check_arithmetic(text)
    warnings.extend(arith_warnings)
    claims = unsupported_claims(text, sources)
    warnings.extend(unsupported_warning(sentence, numbers) for sentence, numbers in claims)
    if unsupported is not None:
        unsupported.extend(sentence for sentence, _numbers in claims)
    figures = answer_figures(text)
    if not figures:
        return cited, warnings, []
    cited_nums = [n for c in cited for n in parse_numbers(by_number[c].text)]
    question_nums = parse_numbers(question)
    unverified: list[str] = []
    seen: set[tuple[float, bool]] = set()
    groups: dict[tuple[int, ...], list[str]] = {}
    source_nums = {c.number: parse_numbers(c.text) for c in sources if c.number not in cited}
    for f in figures:
        if any(s < f.end and f.start < e for s, e in ok_spans):
            continue  # a computed result whose arithmetic checks out
        if any(same_number(f, s) for s in cited_nums) or any(same_number(f, q) for q in question_nums):
            continue
        if any(f.raw in w for w in arith_warnings):
            continue
        key = (f.value, f.pct)
        if key in seen:  # "$47,305 million" and "47,305" again: one figure
            continue
        seen.add(key)
        unverified.append(f.raw)
        elsewhere = tuple(n for n, nums in source_nums.items() if any(same_number(f, s) for s in nums))
        groups.setdefault(elsewhere, []).append(f.raw)
    marks = "".join(f"[{n}]" for n in cited)
    for elsewhere, raws in groups.items():
        what = ("the figure " if len(raws) == 1 else "the figures ") + ", ".join(raws)
        if not cited:
            note = "the answer cites no source for it"
        elif elsewhere:
            note = (f"not in the cited sources {marks}; found in uncited source "
                    + "".join(f"[{n}]" for n in elsewhere) + " (check the citation)")
        else:
            note = f"in none of the cited sources {marks}"
        warnings.append(f"Check {what}: {note}. Verify before use.")
    return cited, warnings, unverified
