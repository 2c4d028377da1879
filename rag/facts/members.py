"""Which dimension member a question names, read from the filing's own members: "<Company> International's net
sales", "revenue of the energy generation and storage segment". A segment, region or product line that the filing
tags as a member of an axis can be asked for by the words the filing prints for it (the member's name, or the
row label printed beside its figure), with no list of segment words written here.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable

from ..schema import MetricMention
from .labels import class_words, group_words, member_words
from .mentions import PART_KIND_WORDS, initials, plain_word, without_conjunction
from .metrics import member_concepts, metric
from .views import FilingView

_WORD = re.compile(r"&|[A-Za-z0-9][A-Za-z0-9.&'’-]*")  # a word as a question or a member's name writes it


def _words(text: str) -> list[str]:
    """Lower-case words without punctuation ("U.S." -> "us"), plural -s dropped: how members and questions compare."""
    out = []
    for raw in _WORD.findall(text or ""):
        w = re.sub(r"[^a-z0-9&]", "", raw.lower().removesuffix("'s").removesuffix("’s"))
        if w:
            # "Tools & Hardware" is the member ToolsAndHardware: an ampersand is the word "and".
            out.append("and" if w == "&" else plain_word(w))
    # A country member is named by its ISO code ("country:US"): the United States is written "U.S." as often.
    for i in range(len(out) - 1):
        if out[i:i + 2] == ["united", plain_word("states")]:
            out[i:i + 2] = ["us"]
            break
    return out


def _run_named(form: list[str], asked: list[str]) -> int:
    """How many of the question's words, in a run, write the form: word for word, or run together as an XBRL
    member's name is ("AcmerxMember" is the question's "Acme Rx"; a member's name holds no spaces and its
    capitals are the filer's choice). 0 when no run does."""
    joined = "".join(form)
    best = 0
    for i in range(len(asked)):
        run = ""
        for j in range(i, min(len(asked), i + 7)):
            run += asked[j]
            if len(run) > len(joined):
                break
            if run == joined:
                best = max(best, j - i + 1)
    return best if joined else 0


def _forms_of(member: str, row_labels: Iterable[str], company: set[str],
              metric_words: set[str] = frozenset()) -> list[tuple[list[str], bool]]:
    """The ways a filing writes a member: its name's words and its printed row labels, each also without the
    company's own name in front ("<Company> International" is also "International") and without the metric's own
    words ("Data processing revenues" is also "data processing", which "revenue ... from data processing" names
    apart from the metric); True for those shortened forms. A form shortened to one word is too common a word
    ("service", "other") to name a part by itself."""
    name = _words(" ".join(member_words(member)))
    forms = [name, group_words(name), initials(without_conjunction(name)), class_words(name)] + [
        _words(label) for label in row_labels if label]
    out: list[tuple[list[str], bool]] = []
    for form in forms:
        own = [w for w in form if w not in metric_words]
        for candidate, shortened in ((form, False), (_without_company(form, company), True),
                                     (own if len(own) >= 2 and len(own) < len(form) else [], True)):
            if candidate and all(candidate != known for known, _ in out):
                out.append((candidate, shortened))
    return out


def _without_company(words: list[str], company: set[str]) -> list[str]:
    i = 0
    while i < len(words) and words[i] in company:
        i += 1
    return words[i:] if 0 < i < len(words) else []


def narrowed_by(mention: MetricMention, winners: list[tuple[str, ...]]) -> MetricMention | None:
    """The mention qualified by the one member named (see members_named); None when none or several are. The
    qualifier is the member's own words, so the facts layer's member lookup finds exactly that member."""
    return replace(mention, before=list(winners[0])) if len(winners) == 1 else None


# A name of two or more capitalised words ("<Name> Brand", "<Company> International"): a form of a member that is
# only part of it names the member only when the rest is the company's own name or the kind of part ("Zephyr
# Segment"). A possessive ends a name: in "<Company>'s Latin America segment" the owner and its part are two names.
_CAPITALISED_NAME = re.compile(r"\b[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)+")


def members_named(question: str, mention: MetricMention, views: list[FilingView],
                  concepts: Iterable[str]) -> list[tuple[str, ...]]:
    """The words of the members of the metric's concepts that the question names best: the longest run of its
    words that a member's name or printed row label makes, a form shortened by the company's name counting half a
    word less ("<Brand> brand" names the <Brand> segment before "<Company> Brand"). Several when they tie."""
    asked = _words(question)
    phrase = set(_words(" ".join(mention.words)))
    names = [set(_words(m.group(0))) for m in _CAPITALISED_NAME.finditer(question or "")]
    best: dict[tuple[str, ...], float] = {}  # a member's words (filings of different years name it differently)
    for view in views:
        company = set(_words(view.filing.get("company") or "")) | set(_words(view.filing.get("ticker") or ""))
        for concept in concepts:
            for group in view.by_concept.get(concept, ()):
                if len(group.dims) != 1:
                    continue
                member = next(iter(group.dims.values()))
                for form, shortened in _forms_of(member, {r.row_label for r in group.rows}, company, phrase):
                    # A member that only repeats the metric's or the company's words names nothing more.
                    named = _run_named(form, asked)
                    if set(form) <= phrase | company or not named:
                        continue
                    if any(set(form) < name and name - set(form) - company - PART_KIND_WORDS for name in names):
                        continue  # "<Name> Brand" names another part than the "Brand" of "<Company> Brand"
                    key = tuple(plain_word(w) for w in member_words(member))
                    best[key] = max(best.get(key, 0), named - (0.5 if shortened else 0.0))
    if not best:
        return []
    top = max(best.values())
    return [m for m, n in best.items() if n == top]


def parts_listed(question: str, mention: MetricMention, views: list[FilingView]) -> list[MetricMention]:
    """The mention once for each member the question lists ("<product> and <other product> combined"), each narrowed
    to its member; empty when fewer than two are listed."""
    listed = members_listed(question, mention, views, member_concepts(metric(mention.metric_key)))
    return [replace(mention, before=list(m), after=[]) for m in listed] if len(listed) >= 2 else []


def members_listed(question: str, mention: MetricMention, views: list[FilingView],
                   concepts: Iterable[str]) -> list[tuple[str, ...]]:
    """Every member a question lists for one figure ("<product> and <other product> combined"): the members it names
    best (members_named), then the best among the words those leave, until no member is named. A sum of parts asks
    for each part it lists, and a part named in fewer words than another is still asked."""
    found: list[tuple[str, ...]] = []
    rest = question
    while True:
        new = [m for m in members_named(rest, mention, views, concepts) if m not in found]
        if not new:
            asked = _words(question)  # in the order the question lists them
            return sorted(found, key=lambda m: next(
                (i for i in range(len(asked)) if "".join(asked[i:]).startswith("".join(m))), len(asked)))
        found += new
        taken = {w for m in new for w in m}
        rest = _WORD.sub(lambda word, taken=taken: " " if set(_words(word.group(0))) <= taken else word.group(0), rest)


def members_holding(words: str, views: list[FilingView], concepts: Iterable[str]) -> list[tuple[str, ...]]:
    """The members of the concepts (their words, as members_named gives them) that carry every one of the words in
    their name or a printed row label ("service fees" in "Equipment service fees"): words that name a
    part more loosely than members_named asks, though such a part still sits inside the concepts' total."""
    wanted = set(_words(words))
    found: list[tuple[str, ...]] = []
    if not wanted:
        return found
    for view in views:
        for concept in concepts:
            for group in view.by_concept.get(concept, ()):
                if len(group.dims) != 1:
                    continue
                member = next(iter(group.dims.values()))
                labels = [member_words(member)] + [r.row_label.split() for r in group.rows if r.row_label]
                key = tuple(plain_word(w) for w in member_words(member))
                if key not in found and any(wanted <= set(_words(" ".join(label))) for label in labels):
                    found.append(key)
    return found
