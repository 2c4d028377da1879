"""Readable labels for XBRL concepts and dimension members, units, and how figures are written."""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from datetime import date
from functools import lru_cache
from typing import Iterable

log = logging.getLogger(__name__)

ANNUAL_FORMS = ("10-K", "10-K/A", "10-KT", "10-KT/A", "20-F", "20-F/A", "40-F", "40-F/A")
ANNUAL_DAYS = (350, 380)  # a fiscal year: 52/53-week years are 364 or 371 days
# A 10-Q prints the quarter and the year to date; their lengths in days as XBRL contexts give them (end - start),
# tolerant of 13/14-week quarters and 52/53-week years: 90-97 days, 26-27 weeks (175-190), 39-40 weeks (266-280).
PERIOD_DAYS = {3: (84, 98), 6: (175, 190), 9: (266, 280), 12: ANNUAL_DAYS}
MONTHS_WORDS = {3: "three", 6: "six", 9: "nine", 12: "twelve"}

# ==============================================================================================================
# Labels

WELL_KNOWN_LABELS = {
    "us-gaap:Revenues": "Total revenues",
    "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax": "Revenue from contracts with customers",
    "us-gaap:RevenueFromContractWithCustomerIncludingAssessedTax": "Revenue from contracts with customers (incl. assessed tax)",
    "us-gaap:SalesRevenueNet": "Net sales",
    "us-gaap:RevenuesNetOfInterestExpense": "Total revenues, net of interest expense",
    "us-gaap:CostOfRevenue": "Cost of revenue",
    "us-gaap:CostOfGoodsAndServicesSold": "Cost of goods and services sold",
    "us-gaap:GrossProfit": "Gross profit",
    "us-gaap:OperatingIncomeLoss": "Operating income (loss)",
    "us-gaap:OperatingExpenses": "Operating expenses",
    "us-gaap:CostsAndExpenses": "Total costs and expenses",
    "us-gaap:NetIncomeLoss": "Net income (loss) attributable to the company",
    "us-gaap:ProfitLoss": "Net income (loss) including noncontrolling interests",
    "us-gaap:NetIncomeLossAvailableToCommonStockholdersBasic": "Net income available to common stockholders",
    "us-gaap:EarningsPerShareDiluted": "Diluted earnings per share",
    "us-gaap:EarningsPerShareBasic": "Basic earnings per share",
    "us-gaap:EarningsPerShareBasicAndDiluted": "Basic and diluted earnings per share",
    "us-gaap:Assets": "Total assets",
    "us-gaap:AssetsCurrent": "Total current assets",
    "us-gaap:Liabilities": "Total liabilities",
    "us-gaap:LiabilitiesCurrent": "Total current liabilities",
    "us-gaap:LiabilitiesAndStockholdersEquity": "Total liabilities and stockholders' equity",
    "us-gaap:StockholdersEquity": "Total stockholders' equity",
    "us-gaap:StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest": "Total equity including noncontrolling interests",
    "us-gaap:CashAndCashEquivalentsAtCarryingValue": "Cash and cash equivalents",
    "us-gaap:CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents": "Cash, cash equivalents and restricted cash",
    "us-gaap:NetCashProvidedByUsedInOperatingActivities": "Net cash provided by (used in) operating activities",
    "us-gaap:NetCashProvidedByUsedInInvestingActivities": "Net cash provided by (used in) investing activities",
    "us-gaap:NetCashProvidedByUsedInFinancingActivities": "Net cash provided by (used in) financing activities",
    "us-gaap:PaymentsToAcquirePropertyPlantAndEquipment": "Payments for property, plant and equipment",
    "us-gaap:PaymentsToAcquireProductiveAssets": "Purchases of property and equipment (productive assets)",
    "us-gaap:ResearchAndDevelopmentExpense": "Research and development expense",
    "us-gaap:SellingGeneralAndAdministrativeExpense": "Selling, general and administrative expense",
    "us-gaap:IncomeTaxExpenseBenefit": "Provision for (benefit from) income taxes",
    "us-gaap:LongTermDebt": "Long-term debt, including current portion",
    "us-gaap:LongTermDebtNoncurrent": "Long-term debt, non-current",
    "us-gaap:LongTermDebtCurrent": "Long-term debt, current portion",
    "us-gaap:EffectiveIncomeTaxRateContinuingOperations": "Effective income tax rate",
    "us-gaap:WeightedAverageNumberOfDilutedSharesOutstanding": "Weighted-average diluted shares outstanding",
    "us-gaap:WeightedAverageNumberOfSharesOutstandingBasic": "Weighted-average basic shares outstanding",
    "us-gaap:CommonStockSharesOutstanding": "Common shares outstanding (balance sheet)",
    "dei:EntityCommonStockSharesOutstanding": "Shares of common stock outstanding (cover page)",
    "dei:EntityPublicFloat": "Public float (aggregate market value held by non-affiliates)",
    "us-gaap:StockRepurchaseProgramRemainingAuthorizedRepurchaseAmount1": "Remaining authorized stock repurchase amount",
    "us-gaap:PaymentsForRepurchaseOfCommonStock": "Payments for repurchase of common stock",
    "us-gaap:PaymentsOfDividends": "Dividends paid",
    "us-gaap:PaymentsOfDividendsCommonStock": "Dividends paid on common stock",
    "us-gaap:ShareBasedCompensation": "Share-based compensation",
    "us-gaap:DepreciationDepletionAndAmortization": "Depreciation, depletion and amortization",
}

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def split_camel(name: str) -> list[str]:
    """'RevenueFromContractWithCustomer' -> ['Revenue', 'From', ...]; 'IWidget' -> ['iWidget']."""
    words = _CAMEL.sub(" ", name).split()
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        # A lone capital before a word is a product prefix: 'I Widget' -> 'iWidget', 'E Commerce' -> 'eCommerce'.
        if len(w) == 1 and w.isupper() and i + 1 < len(words) and words[i + 1][:1].isupper() and w not in "A":
            out.append(w.lower() + words[i + 1])
            i += 2
            continue
        out.append(w)
        i += 1
    return out


def concept_label(concept: str) -> str:
    """A readable label: the table of well-known concepts, else the CamelCase name split into words."""
    if concept in WELL_KNOWN_LABELS:
        return WELL_KNOWN_LABELS[concept]
    words = split_camel(concept.split(":")[-1])
    if not words:
        return concept
    rest = [w if (w.isupper() or any(c.isupper() for c in w[1:])) else w.lower() for w in words[1:]]
    return " ".join([words[0]] + rest)


def class_words(words: list[str]) -> list[str]:
    """A class of stock's own name inside a member's words: "Class A" of CommonClassAMember, "Class C" of
    CapitalClassCMember, "Series B" of SeriesBPreferredStockMember. Holders and filings name a class by it alone;
    [] when the words name no class."""
    for i, w in enumerate(words[:-1]):
        if w in ("class", "series") and re.fullmatch(r"[a-z]\d?", words[i + 1]):  # "A", "B1" ("B-1")
            return words[i:i + 2]
    return []


def group_words(words: list[str]) -> list[str]:
    """A group of segments tagged as their total ("Total Acme" over "Acme Health" and "Acme Rx") is named by the
    group's name alone: its words without "total"; [] for any other member."""
    return words[1:] if len(words) >= 2 and words[0] == "total" else []


def member_words(member: str) -> list[str]:
    """'acme:WidgetSalesMember' -> ['widget', 'sales']; 'acme:IWidgetMember' -> ['iwidget']."""
    local = member.split(":")[-1]
    local = re.sub(r"(Member|Segment|SegmentMember)$", "", local)
    local = re.sub(r"Segment$", "", local)
    return [w.lower() for w in split_camel(local) if w]


def member_label(member: str, row_labels: Iterable[str] = (), printed: str = "") -> str:
    """How a member is shown: the row label the filing prints beside its figure when that label names the member
    ("<Brand> ads" for acme:<Brand>AdvertisingRevenueMember, "Services" for ServiceMember: the label's first word
    and the member's name start alike), else the member's name split from its camel case. A name the filer ran
    together ("AcmerxMember") is shown as `printed` (the text of the passage that reports the figure) spells it
    apart, "Acme Rx"."""
    local = re.sub(r"(?:Segment)?Member$", "", member.split(":")[-1])
    name = re.sub(r"[^a-z0-9]", "", local.lower())
    for label in sorted({re.sub(r"\s*\(\d\)\s*$", "", r).strip() for r in row_labels if r}):
        first = re.sub(r"[^a-z0-9]", "", (label.split() or [""])[0].lower())
        # "Total revenues" beside a "Total Acme" group member names the line's total, not the member.
        if name and len(first) >= 3 and first != "total" and (name.startswith(first) or first.startswith(name)) \
                and len(label) <= 60:
            return label
    words = split_camel(local)
    if len(words) == 1 and len(name) >= 5 and printed:
        apart = Counter(m.group(0) for m in re.finditer(
            r"(?<![A-Za-z])" + r"[ .&-]?".join(re.escape(c) for c in name) + r"(?![A-Za-z])", printed, re.I)
            if " " in m.group(0))
        if apart:
            return apart.most_common(1)[0][0]
    return " ".join(words) or member


def lower_label(label: str) -> str:
    """'Diluted EPS' -> 'diluted EPS': lower-case for mid-sentence use, acronyms kept."""
    return " ".join(w if sum(c.isupper() for c in w) > 1 else w.lower() for w in label.split())


def dims_label(dims: dict) -> str:
    return "; ".join(f"{concept_label(axis).removesuffix(' axis')} = {member_label(m)}" for axis, m in dims.items())


# How statements print a line beyond its name: a sign word before it ("Less: Net income attributable to
# noncontrolling interests") and the other sign's word in brackets ("Net income (loss)", "Other income (expense),
# net"). A question names the line in one sign: "net loss attributable to ...", "net income attributable to ...".
_SIGN_PREFIX = re.compile(r"^(?:less|add|plus|deduct)\s*:\s*", re.I)
_OTHER_SIGN = re.compile(r"(\w+)(?:\s+|\s*/\s*)\(([A-Za-z]+)\)")  # "income (loss)", "income/(expense)"
# A line netted of its opposite says so at its end ("Other income (expense), net", "Other income (loss) — net",
# "Interest expense, net"); a question names the line without it.
_NET_SUFFIX = re.compile(r"(?:\s*,\s*|\s+[—–-]\s*)net$", re.I)
# A footnote mark after a label ("Revenue recognized (2)", "Other (1)") refers to a note below the table: it is no
# word of the figure's name, and a question's "Q2" must not name the label by it.
_FOOTNOTE_MARK = re.compile(r"\s*\((?:\d{1,2}|[a-z])\)(?=\s|$)")


# A bracket of counts a balance-sheet line prints beside its name ("Treasury stock, at cost (212 and 198 shares,
# respectively)"): no word a question names the line by.
_COUNTS_IN_BRACKETS = re.compile(r"\s*\([^()]*\d[^()]*\)|\s*[—–;:]\s*[^—–;:]*\d[^—–;:]*\bshares\b.*$")


def _bare(form: str) -> str:
    return _COUNTS_IN_BRACKETS.sub("", _FOOTNOTE_MARK.sub("", _SIGN_PREFIX.sub("", form))).strip()


@lru_cache(maxsize=65536)
def label_readings(form: str) -> frozenset[str]:
    """A printed label as a question may name it: as printed, without its sign word or footnote marks, with and
    without a closing "net", and in each of the signs it names."""
    bare = _bare(form)
    readings = {bare} if _FOOTNOTE_MARK.search(form) else {form, bare}
    for line in (bare, _NET_SUFFIX.sub("", bare)):
        readings.add(line)
        if _OTHER_SIGN.search(line):
            readings |= {_OTHER_SIGN.sub(r"\1", line), _OTHER_SIGN.sub(r"\2", line)}
    return frozenset(readings)


def first_sign(label: str) -> str:
    """The label read in the sign it names first: "Interest expense (income), net" -> "interest expense, net"."""
    return lower_label(_OTHER_SIGN.sub(r"\1", _bare(label)))


def other_sign(label: str) -> str | None:
    """The label read in the sign its brackets name, as a figure below zero is worded: "Other income/(expense),
    net" -> "other expense, net", "Net income (loss)" -> "net loss"; None when it names one sign only."""
    bare = _bare(label)
    return lower_label(_OTHER_SIGN.sub(r"\2", bare)) if _OTHER_SIGN.search(bare) else None


# ==============================================================================================================
# Units and formatting

SCALE_WORDS = {3: "thousand", 6: "million", 9: "billion"}
_CURRENCY = re.compile(r"(usd|eur|gbp|jpy|cny|cad|chf|aud|inr|krw|sek|dkk|nok|brl|mxn|hkd|sgd|twd)", re.I)


def unit_kind(unit: str | None) -> str:
    """money / per_share / shares / pure / other, from an ix unitRef id ('usd', 'usdPerShare', 'shares', ...)."""
    u = re.sub(r"[^a-z/]", "", (unit or "").lower())
    if not u:
        return "other"
    if "share" in u and ("per" in u or "/" in u) and _CURRENCY.search(u):
        return "per_share"
    if u in ("shares", "share") or (u.endswith("shares") and not _CURRENCY.search(u)):
        return "shares"
    if u in ("pure", "percent", "ratio", "number") or u.startswith("pure"):
        return "pure"
    if _CURRENCY.search(u) and "per" not in u:
        return "money"
    return "other"


def currency_of(unit: str | None) -> str:
    m = _CURRENCY.search(unit or "")
    return m.group(1).upper() if m else ""


def decimal_places(text: str | None) -> int:
    m = re.search(r"\.(\d+)\s*$", (text or "").strip().rstrip(")%"))
    return len(m.group(1)) if m else 0


def format_money(value: float, scale: int = 6, places: int = 0, currency: str = "USD") -> str:
    sign = "-" if value < 0 else ""
    cur = "$" if currency in ("USD", "") else f"{currency} "
    v = abs(value)
    if scale in SCALE_WORDS:
        return f"{sign}{cur}{v / 10 ** scale:,.{places}f} {SCALE_WORDS[scale]}"
    return f"{sign}{cur}{v:,.{places}f}"


def format_amount(value: float, kind: str, *, scale: int = 0, places: int | None = None, unit: str = "") -> str:
    """A value as an analyst writes it: '$48,210 million', '$6.98 per share', '9,482,316,000 shares', '26.4%'."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if kind == "money":
        return format_money(value, scale if scale in SCALE_WORDS else 0, places or 0, currency_of(unit) or "USD")
    if kind == "per_share":
        cur = currency_of(unit) or "USD"
        sign = "-" if value < 0 else ""
        sym = "$" if cur == "USD" else f"{cur} "
        return f"{sign}{sym}{abs(value):,.{2 if places is None else max(places, 2)}f} per share"
    if kind == "shares":
        return f"{value:,.0f} shares"
    if kind in ("pure", "percent"):
        p = 2 if places is None else places
        return f"{value * 100:,.{p}f}%"
    if kind == "ratio":
        return f"{value:,.{2 if places is None else places}f}"
    if kind == "days":
        return f"{value:,.{1 if places is None else places}f} days"
    return f"{value:,.{places or 0}f} {unit}".strip()


def nice_date(iso: str | None) -> str:
    try:
        d = date.fromisoformat(str(iso))
    except (TypeError, ValueError):
        return str(iso or "")
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def days_between(start: str | None, end: str | None) -> int | None:
    try:
        return (date.fromisoformat(end) - date.fromisoformat(start)).days
    except (TypeError, ValueError):
        return None


def duration_months(start: str | None, end: str | None) -> int | None:
    """3, 6, 9 or 12 for a quarter, a half, nine months or a year; 0 for an instant; None for any other length."""
    if start in (None, ""):
        return 0
    days = days_between(start, end)
    if days is None:
        return None
    return next((months for months, (lo, hi) in PERIOD_DAYS.items() if lo <= days <= hi), None)


def tolerance(decimals) -> float:
    """Half a unit of the stated precision: decimals=-6 -> 500,000."""
    if decimals in (None, "", "INF", "inf"):
        return 0.0
    try:
        return 0.5 * 10 ** (-int(decimals))
    except (TypeError, ValueError):
        return 0.0


def precision_digits(decimals) -> int:
    if decimals in (None, "", "INF", "inf"):
        return 99
    try:
        return int(decimals)
    except (TypeError, ValueError):
        return 99


