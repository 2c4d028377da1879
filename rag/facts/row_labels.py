"""A figure asked for by the words the filing prints beside it: "purchases of property and equipment", "net loss
attributable to common stockholders", "dividends paid". The metric vocabulary (rag.facts.metrics) names the
figures analysts ask for most; any other figure the filing tags can still be asked for by its own row label or
the concept's label, read from the filing, with no phrase list written here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterable

from ..phrasing import PhraseList
from ..schema import MetricMention
from ..words import spelled_out, tokens
from .labels import label_readings
from .mentions import CHANGE_WORDS, normalize
from .metrics import labelled_key
from .store import FactRow
from .views import FilingView, concept_words

_ASKS_FIGURE = PhraseList("asks_figure")
# A question written as the name of what it wants ("Acme's total comprehensive income for 2024?", "ACME 2024
# cash used for investing activities"): no word asks or requests anything else, so it asks for the figure it names.
_ASKS_ANYTHING = PhraseList("asking_words")
# A label of one word ("Dividends", "Total") is too common across statements to name one figure.
_MIN_LABEL_WORDS = 2
_SPENDING = PhraseList("spending")
_SPENDING_WORDS = set(tokens("expense expenses cost costs"))
# The two words an "and" joins in a label ("Marketing and advertising expense", "Selling, general and
# administrative"): a question may name the figure by one of them.
_CONJUNCTS = re.compile(r"([A-Za-z][\w-]*),?\s+and\s+([A-Za-z][\w-]*)")


def _printed_labels(rows) -> set[str]:
    return {r.row_label.strip() for r in rows if r.row_label and r.row_label.strip()}


def _concept_agrees(concept: str, asked: set[str]) -> bool:
    """A row label is read in its table: "Current and non-current term debt" in a hedging table tags the hedged
    debt's fair value. The concept's own name must share a word with the question, beyond placing words, so
    that a label borrowed by another table's figure is not taken for the figure the question means."""
    return bool(concept_words(concept) & asked)


def labelled_mentions(question: str, views: Iterable[FilingView], company_words: set[str] = frozenset(),
                      on_statement: Callable[[FactRow], bool] = lambda _row: False,
                      min_words: int = _MIN_LABEL_WORDS, part_of_figure: bool = False) -> list[MetricMention]:
    """The figure whose printed label the question spells out in full (every word of the label is a word of the
    question), the longest such label winning; [] when none, when two different concepts tie, or when the
    question does not ask for a figure. Only consolidated facts (no dimension): a member needs its own words.

    A label printed on a primary statement (`on_statement`) names its line whatever the concept is called: an
    industry's own line ("Medical costs", tagged PolicyholderBenefitsAndClaimsIncurredNet) is asked for by the
    words the statement prints. Elsewhere the concept must agree with the question (see _concept_agrees).
    `min_words`: 1 reads a label of one word ("Premiums") too, for a text that names one figure alone (the whole
    after "as a percentage of"). `part_of_figure`: the text is a piece of a question already read as asking for a
    figure (the part of a share), so its own words need not ask for one."""
    if not part_of_figure and not (_ASKS_FIGURE.search((question or "").lower()) or not _ASKS_ANYTHING.search((question or "").lower())):
        return []
    asked = _asked_words(question, company_words)
    best: dict[str, tuple[float, str, bool, bool]] = {}  # concept -> (label words, label, instant, on a statement)
    for concept, group, form, reading, words in _spelled_out(views, asked, with_concept_label=True,
                                                             min_words=min_words):
        agrees = _concept_agrees(concept, asked)
        # Looked up only for a label the question spells out: a chunk lookup per fact would cost more than the
        # search.
        stated = any((r.row_label or "").strip() == form and on_statement(r) for r in group.rows)
        if not (agrees or stated):
            continue
        # A label named in full outranks one of as many words named in part (one of its joined words left out).
        named = len(words) if words == _label_words(reading) else len(words) - 0.5
        if (named, stated) > best.get(concept, (0, "", False, False, ""))[:4:3]:
            best[concept] = (named, form, group.instant, stated, reading)
    if not best:
        return []
    top = max(entry[0] for entry in best.values())
    winners = [(concept, label, instant, stated, reading)
               for concept, (n, label, instant, stated, reading) in best.items() if n == top]
    if len(winners) > 1 and not CHANGE_WORDS.search(normalize(question)):
        # The same label on the balance sheet and on the cash-flow statement's line for its change in the year
        # ("Accrued and other current liabilities"): the change (the taxonomy's IncreaseDecrease...) is asked
        # only with a word of change.
        winners = [w for w in winners if not w[0].split(":")[-1].startswith("IncreaseDecrease")] or winners
    if len(winners) > 1:
        # The same label on a statement line and in a note ("Interest income" of the discontinued operations): the
        # statement's line is the figure asked. Two statement lines under one label stay ambiguous.
        winners = [w for w in winners if w[3]]
    if len(winners) != 1:
        return []
    concept, label, instant, _stated, reading = winners[0]
    # Shown as printed; its words are those of the reading the question names, so a sign word the question left
    # out ("(loss)") does not make the label look more exact than the question's own metric phrase.
    return [MetricMention(labelled_key(concept, label, instant), 0, 0, reading.lower().split())]


# A rate or ratio named after a line's label ("medical cost ratio", "payout rate", "R&D as a % of sales"): a share
# of the line, so the line's amount is not the figure asked.
_RATE = PhraseList("rate_words")


def asks_rate_of(question: str, mention: MetricMention) -> bool:
    """The question asks for a rate or ratio that the label it names does not print ("Acme medical cost ratio
    2024" spells out "Medical costs", a line of dollars): the label's amount would answer a question not asked."""
    label = " ".join(mention.words)
    return any(not re.search(re.escape(m.group(0)), label, re.I) for m in _RATE.finditer(question or ""))


def spelled_out_labels(question: str, views: Iterable[FilingView], company_words: set[str] = frozenset()) -> list[set[str]]:
    """The words the question names of every consolidated figure's printed label of two words or more (see
    _named_words): "Sales to customers", "Proceeds from maturities of marketable securities". A word of the question
    that sits in one of them is part of a figure's name, whatever else the word can mean."""
    out: list[set[str]] = []
    for _concept, _group, _form, _reading, words in _spelled_out(views, _asked_words(question, company_words)):
        if words not in out:
            out.append(words)
    return out


# A question asks with the verb ("how much did it pay for businesses acquired", "what did it get from selling
# investments"); the cash-flow statement (ASC 230) names each line by the noun of the act: "Payments for ...",
# "Proceeds from sale of ...", "Repayments of ...", "Issuance of ...", "Purchases of ...". Keys are stems, values
# plain words.
_ACT_NOUNS = {stem: set(tokens(nouns)) for stem, nouns in {
    "pay": "payments", "repay": "repayments", "acquir": "acquisitions", "buy": "purchases", "invest": "investments",
    "issu": "issuance", "sell": "sale disposal proceeds", "receiv": "proceeds",
    # Debt raised or borrowed comes in as "Proceeds from issuance of ..." or "Proceeds from borrowings"; what is
    # collected from a sale or a disposal, as "Proceeds from ...".
    "rais": "proceeds issuance", "borrow": "proceeds borrowings", "new": "issuance", "collect": "proceeds",
}.items()}


def act_nouns(words: set[str]) -> set[str]:
    """The nouns the cash-flow statement prints for the acts some of these words (tokens) name: "issu" adds
    "issuanc", "rais" adds "proc" (see _ACT_NOUNS)."""
    return {noun for word in words & _ACT_NOUNS.keys() for noun in _ACT_NOUNS[word]}
# What a company sets aside for a loss it expects is printed as a provision or a reserve ("Litigation provision").
_SET_ASIDE = re.compile(r"\bset(?:s|ting)?\s+aside\b|\bput\s+aside\b|\bearmark(?:s|ed)?\b", re.I)
_PROVISION_WORDS = set(tokens("provision provisions reserve reserves"))
# Buying back its own stock is what filings print as a repurchase.
_BUY_BACK = re.compile(r"\b(?:buy(?:s|ing)?|bought)\s+back\b|\bbuy-?backs?\b", re.I)
# Debt paid down, off or back is what the cash-flow statement prints as its repayments.
_PAY_DOWN = re.compile(r"\bpa(?:y|ys|id|ying)\s+(?:down|off|back)\b", re.I)


def _asked_words(question: str, company_words: set[str]) -> set[str]:
    """The question's words that may name a label: not the company's name; a verb adds the noun its line is
    printed with (see _ACT_NOUNS); "spend" adds what spending is printed as (an expense, a cost)."""
    asked = set(tokens(question)) - company_words | _residual(question)
    asked |= {t for phrase in spelled_out(question) for t in tokens(phrase)}
    asked |= act_nouns(asked)
    if _BUY_BACK.search(question or ""):
        asked |= set(tokens("repurchases"))
    if _PAY_DOWN.search(question or ""):
        asked |= set(tokens("repayments"))
    if _SET_ASIDE.search(question or ""):
        asked |= _PROVISION_WORDS
    return asked | _SPENDING_WORDS if _SPENDING.search((question or "").lower()) else asked


# "Other" is a stop word to tokens(), but a label that says it names what is left over ("Other income, net",
# "Total other income (expense)"), never the whole ("net income", "total comprehensive income"): the question
# must say it too.
_OTHER = re.compile(r"\bother\b", re.I)


def _residual(text: str) -> set[str]:
    return {"other"} if _OTHER.search(text or "") else set()


@lru_cache(maxsize=65536)
def _label_words(label: str) -> frozenset[str]:
    """A label's words as questions are compared with them; cached, as every question reads every label of the
    filings asked about."""
    return frozenset(tokens(label)) | _residual(label)


def _named_words(form: str, asked: set[str], min_words: int = _MIN_LABEL_WORDS) -> set[str] | None:
    """The words of a label that the question names: all of them, or all but one of two words an "and" joins
    ("advertising expense" names "Marketing and advertising expense", which the filing prints as one line); None
    when it names fewer, or fewer than two."""
    words = set(_label_words(form))
    if not words - _SPENDING_WORDS:
        return None  # "Costs and expenses": what is spent on is what the question names, not the spending itself
    if words <= asked:
        return words if len(words) >= min_words else None
    if len(words - asked) != 1 or " and " not in form.lower():
        return None  # checked first: this runs for every label of every filing asked about
    for m in _CONJUNCTS.finditer(form):
        for dropped in (m.group(1), m.group(2)):
            rest = words - set(tokens(dropped))
            if len(rest) >= _MIN_LABEL_WORDS and rest <= asked and len(rest) == len(words) - 1:
                return rest
    return None


def _spelled_out(views: Iterable[FilingView], asked: set[str], with_concept_label: bool = False,
                 min_words: int = _MIN_LABEL_WORDS):
    """(concept, group, label, its reading, the words the question names) for each consolidated figure's label of
    two words or more that the question names in one of its readings (see label_readings, _named_words): its printed
    row labels, and with_concept_label the concept's own label where the concept agrees with the question."""
    for view in views:
        agrees: dict[str, bool] = {}
        for concept, group, form, reading, words, concepts_own in _readings_of(view):
            if len(words - asked) > 1:
                continue  # named in full or but for one joined word, or not at all (see _named_words)
            if concepts_own:
                if not with_concept_label:
                    continue
                if concept not in agrees:
                    agrees[concept] = _concept_agrees(concept, asked)
                if not agrees[concept]:
                    continue
            named = _named_words(reading, asked, min_words)
            if named is not None:
                yield concept, group, form, reading, named


@lru_cache(maxsize=128)
def _readings_of(view: FilingView) -> tuple[tuple, ...]:
    """Every consolidated figure's labels in all their readings, with the words of each, read once per filing view
    (every single-company question compares them all): (concept, group, label, reading, words, whether the label is
    the concept's own rather than printed)."""
    out = []
    for concept, groups in view.by_concept.items():
        for group in groups:
            if group.dims or group.best.value is None:
                continue
            printed = _printed_labels(group.rows)
            own = (group.best.label or "").strip()
            forms = [(form, False) for form in sorted(printed)] + ([(own, True)] if own and own not in printed else [])
            for form, concepts_own in forms:
                for reading in label_readings(form):
                    out.append((concept, group, form, reading, _label_words(reading), concepts_own))
    return tuple(out)
