"""A follow-up question planned against the conversation it belongs to.

A question asked after others may leave unsaid what the conversation already set ("And in fiscal 2024?" after a
question on a company's net sales; "Why?" after a figure). Its plan is merged with the plan of the turn it follows,
field by field: what the follow-up does not set is inherited, what it sets replaces the earlier value. Whether it is
a follow-up at all is read from its plan (it names no company while one was named before, or it names no figure or
topic of its own), not from its wording.
"""

from __future__ import annotations

import copy
from dataclasses import fields, replace

from .facts.metrics import METRIC_BY_KEY
from .schema import Calculation, QuestionPlan
from .words import tokens

# A question that keeps at least this many content words once its companies, years and forms are set aside asks
# something of its own, even when it names no figure or Item ("what does it say about supply chain risks").
TOPIC_WORDS = 3

_YEAR_FIELDS = ("fiscal_years", "fiscal_written", "document_years", "periods", "latest_quarters", "latest",
                "years_back", "dates", "annual")


def names_company(plan: QuestionPlan) -> bool:
    return bool(plan.tickers or plan.unknown_companies)


def names_time(plan: QuestionPlan) -> bool:
    return bool(plan.fiscal_years or plan.periods or plan.latest or plan.latest_quarters or plan.years_back
                or plan.dates)


def names_figure(plan: QuestionPlan) -> bool:
    """The plan asks for a figure of its own: a metric, a count, an amount named, a rate per item."""
    return bool(plan.metrics or plan.counted or plan.number_of or plan.per_item or plan.amount_named)


def names_topic(plan: QuestionPlan) -> bool:
    """The plan asks about something of its own: a figure, an Item or the content of one, a name it could not read
    as a company, or enough words beside its companies, years and forms to say what it asks."""
    if names_figure(plan) or plan.sections or plan.topic_sections or plan.unread_names or plan.name_phrases:
        return True
    rest = plan.question_without(lambda dimension, _value: dimension in ("ticker", "fiscal_year", "form", "period"))
    return len([w for w in tokens(rest) if not w[0].isdigit()]) >= TOPIC_WORDS


def is_follow_up(plan: QuestionPlan, previous: QuestionPlan | None) -> bool:
    """The question continues the conversation: it names no company while the turn before named one, or it names no
    figure or topic of its own."""
    if previous is None or not previous.question.strip():
        return False
    if not names_topic(plan):
        return True
    if names_company(plan) and set(plan.tickers) <= set(previous.tickers) and not plan.unknown_companies:
        # The same company again, with the period left unsaid ("How much of that came from <segment>?"): the
        # conversation's period still holds.
        return not names_time(plan) and names_time(previous)
    return not names_company(plan) and names_company(previous)


def merge_plans(plan: QuestionPlan, previous: QuestionPlan | None) -> QuestionPlan:
    """The plan of `plan`'s question as the conversation makes it mean, after the turn planned as `previous`.

    A follow-up that names a figure or topic of its own keeps it and inherits the companies, years and forms it
    leaves unsaid. One that names none ("And in fiscal 2024?", "And the other company?", "Why?") is the earlier
    question asked again with what the follow-up says in place of what it replaces: its question text, figures and
    calculation are the earlier turn's (and `replaced` names the dimensions the follow-up changed, whose words the
    search leaves out), and a follow-up that asks why or how asks it in prose. `carried` lists what came from the
    conversation. A question that is no follow-up comes back as it is."""
    if not is_follow_up(plan, previous):
        return plan
    if names_topic(plan):
        return _inherit_scope(plan, previous)
    return _ask_again(plan, previous)


def _inherit_scope(plan: QuestionPlan, previous: QuestionPlan) -> QuestionPlan:
    merged = copy.deepcopy(plan)
    carried = []
    if not names_company(plan) and previous.tickers:
        merged.tickers = list(previous.tickers)
        merged.year_of_company = dict(previous.year_of_company)
        carried += previous.tickers
    if not names_time(plan) and names_time(previous):
        for name in _YEAR_FIELDS:
            setattr(merged, name, copy.deepcopy(getattr(previous, name)))
        carried += _time_labels(previous)
    if not plan.forms and previous.forms:
        merged.forms = list(previous.forms)
        carried += previous.forms
    if plan.asks_figure and not names_figure(plan) and not plan.prose_intent:
        # An amount asked without naming a figure ("how much of that came from <segment>"): the earlier figure's.
        merged.metrics = copy.deepcopy(previous.metrics)
        merged.statements = list(previous.statements)
        carried += [_metric_label(m.metric_key) for m in previous.metrics if not m.vetoed]
        if plan.unread_names or plan.name_phrases or plan.source_part:
            # It names what the amount came from: a part of the earlier figure (a segment, a region), whose own
            # amount is asked, not its share of the whole.
            merged.names_part = True
            merged.calculation = replace(merged.calculation, share_of_end=None, amount_of=False)
    if merged.tickers != plan.tickers and plan.intent is not None and plan.intent.refused_as == "off_topic":
        # Read without the company the conversation gives it ("What is <product>?"), a question may look unrelated
        # to any filing: that reading is no verdict on the question asked about the company.
        merged.intent = None
    merged.carried = carried
    return merged


def _ask_again(plan: QuestionPlan, previous: QuestionPlan) -> QuestionPlan:
    merged = copy.deepcopy(previous)
    merged.carried, merged.replaced = [], list(previous.replaced)
    merged.follow_ups = []
    compares = plan.calculation.compares
    if names_company(plan):
        tickers = (previous.tickers if compares else []) + plan.tickers
        merged.tickers = list(dict.fromkeys(tickers))
        merged.unknown_companies = list(plan.unknown_companies)
        merged.year_of_company = {}
        merged.replaced.append("ticker")
    else:
        merged.carried += previous.tickers
    if names_time(plan):
        _set_time(merged, plan, previous, compares)
        merged.replaced += ["fiscal_year", "period"]
    else:
        merged.carried += _time_labels(previous)
    if plan.forms:
        merged.forms = list(plan.forms)
        merged.replaced.append("form")
    else:
        merged.carried += previous.forms
    merged.carried += [_metric_label(m.metric_key) for m in previous.metrics if not m.vetoed] or previous.sections
    merged.calculation = _calculation(previous.calculation, plan.calculation)
    if plan.prose_intent:  # "why?" after a figure: the same figure's story, told in prose
        merged.prose_intent = True
        # Searched with the follow-up's own words beside the earlier question's ("why did they fall"): the passage
        # that tells why uses them, the one that states the figure does not. Appended, so the earlier question's
        # detections keep their places.
        merged.question = f"{previous.question} {plan.question}"
        merged.narrative_words = list(dict.fromkeys(previous.narrative_words + plan.narrative_words))
        merged.statements = []  # a statement's page prints the figure, not why it moved
    # What the follow-up asks of the earlier question (advice, a forecast, prose) is its own; a words-less follow-up
    # read as off the filings' topic ("And <company>?") is only too short to tell, and asks what the earlier did.
    refused = plan.intent is not None and plan.intent.refused_as not in (None, "off_topic")
    if plan.intent is not None and (refused or plan.prose_intent or previous.intent is None):
        merged.intent = plan.intent
    merged.carried = list(dict.fromkeys(merged.carried))
    merged.replaced = list(dict.fromkeys(merged.replaced))
    return merged


def _set_time(merged: QuestionPlan, plan: QuestionPlan, previous: QuestionPlan, compares: bool) -> None:
    for name in _YEAR_FIELDS:
        setattr(merged, name, copy.deepcopy(getattr(plan, name)))
    if plan.years_back and previous.fiscal_years and not plan.fiscal_years:
        # "And the year before?": years before the one the conversation is about, not before the latest filing
        merged.fiscal_years = [min(previous.fiscal_years) - plan.years_back]
        merged.years_back = 0
    if compares:
        merged.fiscal_years = sorted(set(previous.fiscal_years) | set(merged.fiscal_years))


def _calculation(earlier: Calculation, follow_up: Calculation) -> Calculation:
    """The earlier turn's calculation, with what the follow-up asks to compute besides ("how does that compare")."""
    merged = copy.deepcopy(earlier)
    for f in fields(Calculation):
        value = getattr(follow_up, f.name)
        if isinstance(value, bool) and value:
            setattr(merged, f.name, True)
    return merged


def _metric_label(key: str) -> str:
    metric = METRIC_BY_KEY.get(key)
    return metric.label.lower() if metric is not None else key.replace("_", " ")


def _time_labels(plan: QuestionPlan) -> list[str]:
    if plan.periods:
        return [p.label() for p in plan.periods]
    if plan.fiscal_years:
        return [f"FY{y}" for y in plan.fiscal_years]
    return ["latest"] if plan.latest or plan.latest_quarters else []


def unresolved(plans: list[QuestionPlan]) -> bool:
    """The last question is a follow-up its conversation's plans cannot complete: it names no figure or topic of
    its own, and the turn it follows (merged with the turns before) names none either, so asking that turn again
    asks nothing ("Tell me about <company>." then "And in 2024?"). A model may rewrite such a question
    (rag.answer.condense); plan inheritance alone answers every other follow-up. `plans` as plan_conversation's."""
    if len(plans) < 2:
        return False
    previous = plan_conversation(plans[:-1])
    last = plans[-1]
    return is_follow_up(last, previous) and not names_topic(last) and not names_topic(previous)


def plan_conversation(plans: list[QuestionPlan]) -> QuestionPlan:
    """The last plan as its conversation makes it mean: each turn merged with the (merged) turn before it, oldest
    first. `plans` holds the earlier questions' plans, then the current one's."""
    merged = None
    for plan in plans:
        merged = plan if merged is None else merge_plans(plan, merged)
    return merged if merged is not None else QuestionPlan()
