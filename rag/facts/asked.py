"""Readings of a question plan that decide which figure the facts layer may give: a part of the company named
in a possessive, a part no member matches, a balance named as what was bought or sold, the amount a "how much"
question names, several parts left out at once, and whether the filing's own label or the metric vocabulary names
the figure asked."""

from __future__ import annotations

import re
from dataclasses import replace

from ..phrasing import PhraseList
from ..schema import MetricMention, QuestionPlan
from ..words import tokens
from .mentions import attributed, normalize, plain_word
from .metrics import metric
from .row_labels import act_nouns
from .views import concept_words

# A company's name that runs on into a possessive ("<Company> International's net sales"): a segment or subsidiary
# named after the company owns the figure, not the company; "Inc."-like suffixes are still the company.
_RUNS_ON = re.compile(r"\s+(?!(?:Inc|Corp|Co|Corporation|Company|Ltd|Plc)\b)[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*['’]s?\b")


# A deal in a holding: "from selling equity method investments", "the sale of marketable securities", "purchases of
# property", "acquiring businesses", "proceeds from".
_TRADED = PhraseList("traded")


def traded(mention: MetricMention, plan: QuestionPlan) -> bool:
    """Is a balance the question names the thing bought or sold ("how much did it get from selling equity method
    investments")? The figure asked is then the deal's cash flow, and the balance at the year's end is another
    figure. A figure read by its printed label is found in the question by its words."""
    if metric(mention.metric_key).period != "instant":
        return False
    text = normalize(plan.question)
    start = mention.start if mention.end > mention.start else text.find(" ".join(mention.words))
    return start > 0 and _TRADED.ends(text[max(0, start - 80):start])


def names_the_amount(mention: MetricMention, plan: QuestionPlan) -> bool:
    """Is the mention among the words naming the amount asked (plan.amount_named)? A figure read by its printed
    label has no place in the question: its label's words are looked for there instead."""
    start, end = plan.amount_named
    if mention.end > mention.start:
        return start <= mention.start < end
    return bool(set(tokens(" ".join(mention.words))) & set(tokens(normalize(plan.question)[start:end])))


def unread_part(plan: QuestionPlan, specs: list[MetricMention]) -> bool:
    """Does the question name something beyond the company and the figure ("how much revenue did <product> bring
    in"), which no member of the filing matched? A product line or business the filing does not tag is still a part
    of the company, and the company's total is no answer to it; the passages may state the part's figure."""
    # The figure's own words: as the question wrote it, and as its label does ("Cash & Cash Equivalents").
    figure_words = {plain_word(w) for s in specs for w in s.words + normalize(metric(s.metric_key).label).split()}
    if any(plain_word(normalize(name)) not in figure_words for name in plan.unread_names):
        return True
    return unread_source(plan, specs)


def unread_source(plan: QuestionPlan, specs: list[MetricMention]) -> bool:
    """Does the question name a source of the figure in plain words ("revenue ... from wearables", "earned hauling
    <goods>") that neither the figure's own concept says ("revenue from customers" is
    RevenueFromContractWithCustomer...) nor the part a member was read by does? A member read by one qualifier
    ("<region> freight revenue") is no answer to a narrower part named after the verb."""
    own = set(tokens(" ".join(w for s in specs for w in s.words + s.before + s.after))) | {
        w for s in specs for c in metric(s.metric_key).concepts for w in concept_words(c)}
    return any(w not in own for w in tokens(" ".join(plan.source_part)))


def segment_owner(plan: QuestionPlan) -> bool:
    """Does a possessive name a part of a company rather than the company? Then the figure is that part's
    dimension member, when the question names one the filing tags, and never the company's total."""
    return any(dim == "ticker" and _RUNS_ON.match(plan.question, end) for _s, end, dim, _v in plan.spans)



_LISTED = re.compile(r",|\b(?:and|or)\b")
# Parts a sum is asked of: "the current and long-term portions", "A plus B".
_PARTS_LISTED = re.compile(r"\b(?:and|plus)\b|\+", re.I)


def lists_parts(plan: QuestionPlan) -> bool:
    """Does the question list the parts a sum adds ("adding the current and long-term portions together")? With one
    figure read for one company and year, the facts would give a part as the sum."""
    return bool(_PARTS_LISTED.search(plan.question))


def several_left_out(plan: QuestionPlan) -> bool:
    """Does the question leave out several parts ("excluding <segment> and <product>", "outside the U.S. and outside of
    China")? Taking one away would leave the others in."""
    return len(plan.excluded) > 1 or any(_LISTED.search(words) for words in plan.excluded)


def _in_label(words: set[str], label: set[str]) -> bool:
    """Every word is in the label, or is an act the label names by its noun (a cash-flow line: "raised from
    issuing long-term debt" is "Proceeds from issuance of long-term debt")."""
    return all(w in label or act_nouns({w}) & label for w in words)


# Words that say a figure is the whole, not which figure it is ("total net sales" is the line "Net sales").
_SUMMING_WORDS = frozenset(tokens("total consolidated overall reported"))


def label_or_vocabulary(plan: QuestionPlan, labelled: list[MetricMention]
                        ) -> tuple[QuestionPlan, list[list[MetricMention]]] | None:
    """The plan to answer and the mentions to try, in order: the metric vocabulary's (plan.metrics), then the
    figure the filing's own printed label names (`labelled`, rag.facts.row_labels); None when no figure may be
    given.

    The label replaces the metric phrases when it holds every word of them and more ("purchases related to
    property and equipment" is a cash-flow line, not the balance of property and equipment): the shorter phrase's
    figure would answer another question."""
    # A figure qualified by a part ("net revenue from value-added services") that the label leaves out: the
    # label's consolidated figure ("Net revenue") would answer another question.
    # A vetoed phrase ("cash" in "its cash flow statement") names no figure, so it is not weighed against the label.
    named = [mt for mt in plan.metrics if not mt.vetoed]
    qualifiers = set(tokens(" ".join(w for mt in named for w in mt.before + mt.after)))
    label_words = set(tokens(" ".join(w for mt in labelled for w in mt.words)))
    if labelled and not _in_label(qualifiers, label_words):
        labelled = []
    # A figure asked per item ("net sales per retail square foot", "revenue per processed claim") is a rate: only a
    # label that says "per" answers it, never the total the metric vocabulary names.
    if plan.per_item and not (labelled and "per" in {w.lower() for w in labelled[0].words}):
        return None
    phrase_words = set(tokens(" ".join(w for mt in named for w in mt.before + mt.words + mt.after)))
    first_label = set(tokens(" ".join(labelled[0].words))) if labelled else set()
    # The label leaves out a word that makes the metric phrase a figure of its own ("Net income" inside "net interest
    # income"): the label names a broader line, and its figure would answer another question.
    if first_label and first_label < phrase_words and phrase_words - first_label - _SUMMING_WORDS:
        return plan, [plan.metrics]
    if not (labelled and _in_label(phrase_words, first_label) and len(phrase_words) < len(first_label)):
        return plan, [plan.metrics, labelled]
    if plan.calculation.amount_of:
        # "How much of its net income was attributable to noncontrolling interests": the label holds the whole's
        # words and more, so it names the part, and the part's amount is what is asked.
        plan = replace(plan, calculation=replace(plan.calculation, share_of_end=None))
    return plan, [labelled]


def attributed_parts(plan: QuestionPlan, mentions: list[MetricMention]) -> list[MetricMention]:
    """The mentions asked for when one names the part of a figure that one thing accounts for ("in its income tax
    reconciliation, how much tax expense is attributed to the termination fee"): that one, and not the metric's
    other mentions, which only say where the part is printed."""
    parts = [mt for mt in mentions if attributed(plan.question, mt)]
    keys = {mt.metric_key for mt in parts}
    return [mt for mt in mentions if mt.metric_key not in keys or mt in parts]
