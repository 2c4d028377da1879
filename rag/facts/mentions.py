"""Finding the metrics a text asks for or states: metric phrases with the words that qualify them ("<product> net
sales", "revenue from services"), and the words that mark a change or a comparison. The question plan reads
questions with these; the answer checks read answer sentences with the same rules."""

from __future__ import annotations

import re
from typing import Callable, Iterable

from ..companies import WORD_PATTERN
from ..dates import MONTH_WORDS
from ..lexicon import word_set
from ..phrasing import PhraseList, follows
from ..schema import MetricMention
from ..words import HEDGE_WORDS
from .labels import class_words, group_words, member_words
from .metrics import PHRASEBOOK, VERB_PHRASINGS, VETOES, Metric

# Words that never qualify a metric: question words, units, periods, verbs of reporting and change.
STOP_WORDS = word_set("metric_stop") | HEDGE_WORDS
# Words that never narrow a metric, even capitalised ("Total Revenue").
_CORE_STOP = word_set("metric_core_stop")
_PREPS = {"from", "in", "by", "of", "for", "within", "at", "on"}
# A verb that ties a part of a figure to what it comes from: "... is attributed to", "attributable to", "related to".
_ATTRIBUTED = re.compile(r"\s+(?:(?:is|was|were|are)\s+)?(?:attribut(?:ed|able)|allocated|relat(?:ed|ing)|due)\s+"
                         r"(?=to\b)")
# After "revenue in/from/by ...": only these words (and companies, years, dates) leave the metric unqualified, and
# the words for where the filing prints it ("on the cover", "per its balance sheet").
_AFTER_OK = word_set("metric_after_ok") | word_set("metric_after_place")
# Up to five words of what is left out, none a question's clause word; several are listed with commas, "and" or
# "or" ("excluding <segment> and <product>"): all of them are left out, and none is the part asked.
_LEFT_OUT_WORDS = (r"(?:(?!(?:how|what|which|when|where|who|did|does|do|was|were|is|are|in|during|for|at|by|and|or)\b)"
                   r"[a-z][\w'’&.-]*\s*){1,5}")
# What a question rules out ("not counting cash, how much volume", "revenue other than from <product>", "revenue
# excluding leasing"): the words after an exclusion phrase, up to the clause's end or the question's next clause word.
_RULES_OUT = (r"not\s+counting|without\s+counting|excluding|excl\.|exclusive\s+of|except(?:\s+for)?|other\s+than|"
              r"apart\s+from|aside\s+from|leaving\s+(?:out|aside)|setting\s+aside")
# A place a figure is asked from outside of ("revenue from outside the U.S.", "sales outside of China"): the whole less
# that place. Only with an article or "of" ("outside directors" are a kind of director), and only for a figure: in a
# question about prose ("the risks of its operations outside the U.S.") the words are the topic itself.
_OUTSIDE = r"outside\s+of|outside(?=\s+(?:the|its|their)\s)"
_LEFT_OUT = r"\s+((?:the\s+|its\s+|their\s+)?" + _LEFT_OUT_WORDS + r"(?:(?:,\s*|(?:and|or)\s+)" + _LEFT_OUT_WORDS + r")*)"
# The registrant's home country written with "non-" ("non-U.S. revenue"): filings split their figures into U.S. and
# non-U.S. (ASC 280's domestic and foreign revenue, the income tax note's domestic and foreign income), so the
# figure asked is the whole less the U.S.
_NON_HOME = re.compile(r"\bnon-?(u\.s\.(?:a\.)?|us|usa|united\s+states)(?![\w-])")
_EXCLUSION = re.compile(r"\b(?:" + _RULES_OUT + r")" + _LEFT_OUT)
_EXCLUSION_OR_OUTSIDE = re.compile(r"\b(?:" + _RULES_OUT + "|" + _OUTSIDE + r")" + _LEFT_OUT)
# Words that name a fiscal period ("the second quarter", "the three months ended", "first half", "year to date"):
# they say when, never which part of a metric.
_PERIOD_WORDS = re.compile(
    r"\b(?:(?:first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?(?:quarter|half|(?:three|six|nine|3|6|9)[\s-]+"
    r"months?)|quarters?|quarterly|"
    r"(?:three|six|nine|twelve|3|6|9|12)[\s-]+months?|months?|year[\s-]to[\s-]date|ytd|h[12]|ttm|trailing|"
    # The whole year, said of a figure ("full-year dividend per share", "annual revenue").
    r"(?:full|whole|entire)[\s-](?:fiscal[\s-])?year|annual(?:ized)?|"
    # A year named relative to the latest ("two years ago", "a year earlier").
    r"(?:a|one|two|three|\d)\s+(?:fiscal\s+)?years?\s+(?:ago|earlier|before|prior))\b")

CHANGE_WORDS = PhraseList("change")
COMPARE_WORDS = PhraseList("compare")


def normalize(text: str) -> str:
    return (text or "").replace("’", "'").replace("‘", "'").replace("–", "-").replace("—", "-").lower()


def plain_word(word: str) -> str:
    w = word.strip(".'").removesuffix("'s").removesuffix("'")
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


# What a figure is asked before, as taken off it ("revenue before client incentives are deducted", "sales before
# deducting returns", "revenue gross of incentives"): the adjustment, which a statement prints as a line of its own
# below the gross figure. Only with a verb of taking off, or "gross of": "income before income taxes" names a line.
_ADJUSTMENT = r"((?:the\s+|its\s+|their\s+)?" + _LEFT_OUT_WORDS + r")"
_DEDUCTED = re.compile(
    r"\b(?:before|prior\s+to)\s+" + _ADJUSTMENT + r"\s*(?:(?:is|are|was|were|get|gets|got|being)\s+)?"
    r"(?:deducted|subtracted|netted(?:\s+out)?|taken\s+(?:out|off))\b"
    r"|\b(?:before|prior\s+to)\s+(?:deducting|subtracting|netting(?:\s+out)?|taking\s+(?:out|off))\s+" + _ADJUSTMENT
    + r"|\bgross\s+of\s+" + _ADJUSTMENT)


def deductions(low: str) -> list[tuple[int, int, str]]:
    """What the (normalized) text says the figure asked is before, as taken off it (see _DEDUCTED): each phrase's
    span and the words of the adjustment without a leading article."""
    out = []
    for m in _DEDUCTED.finditer(low):
        words = next(g for g in m.groups() if g is not None).strip()
        out.append((m.start(), m.end(), re.sub(r"^(?:the|its|their)\s+", "", words)))
    return out


def exclusions(low: str, *, figure_asked: bool = False) -> list[tuple[int, int, str]]:
    """What the (normalized) text rules out: each exclusion's span, from its phrase to its last word, and the words
    it rules out without a leading article. The one reading of exclusions, for the plan and for each metric; with
    `figure_asked`, a place the figure is asked from outside of too (see _OUTSIDE, _NON_HOME)."""
    out = []
    for m in (_EXCLUSION_OR_OUTSIDE if figure_asked else _EXCLUSION).finditer(low):
        words = re.sub(r"^(?:the|its|their)\s+", "", m.group(1).strip())
        if words:
            out.append((m.start(), m.start(1) + len(m.group(1).rstrip()), words))
    if figure_asked:
        out.extend((m.start(), m.end(1), m.group(1)) for m in _NON_HOME.finditer(low))
    return sorted(out)


# A verb in the past tense right after a metric ("retained earnings flipped negative") says what the figure did.
_PAST_TENSE = re.compile(r"[a-z]{3,}ed")
# Where a figure is printed ("receivables on the balance sheet", "per the cash flow statement"): no part of it.
_STATEMENT_NAMES = re.compile(r"\b(?:(?:consolidated\s+)?balance\s+sheets?|bal\.?\s+sheet|income\s+statements?|"
                              r"cash[\s-]flows?\s+statements?|statements?\s+of\s+(?:cash\s+flows?|operations|income|"
                              r"earnings|financial\s+position))\b")
# The portion of a balance named right before it: a balance sheet splits many of its lines into the part due or
# realised within a year and the rest ("current deferred revenue", "long-term operating lease liabilities").
_PORTION_BEFORE = re.compile(r"\b(current|non-?current|long[\s-]term)\s+$")
_CLASS_OF_STOCK = re.compile(r"\b(?:class|series)\s+[a-z](?:-?\d)?\b")


def _metric_phrases(low: str) -> tuple[list[tuple[int, int, Metric]], list[tuple[int, int]]]:
    """The metric phrases of a normalized question, (start, end, metric) in the question's order, the longest
    winning where they overlap; and where the question names a class of stock.

    A class of stock named inside a metric's phrase ("buying back Class B shares", "repurchases of Class A common
    stock") qualifies it as one named before it does ("Class A share repurchases"): the phrase is matched without
    it, and it becomes the qualifier, so only a figure the filing gives that class answers."""
    classes = [(c.start(), c.end()) for c in _CLASS_OF_STOCK.finditer(low)]
    masked = _CLASS_OF_STOCK.sub(lambda c: " " * len(c.group()), low)
    cands = sorted(PHRASEBOOK.find(masked), key=lambda c: (-(c[1] - c[0]), c[0]))
    picked: list[tuple[int, int, object]] = []
    for s, e, p in cands:
        if not any(s < ce and cs < e for cs, ce, _ in picked):
            picked.append((s, e, p))
    picked.sort(key=lambda c: c[:2])
    if len(picked) > 1:  # "how much revenue did it earn": the verb names no figure beside its object
        picked = [c for c in picked if id(c[2]) not in VERB_PHRASINGS]
    return [(s, e, p.names) for s, e, p in picked], classes


def _no_qualifier(word: str, company_words: set[str]) -> bool:
    """A word that never qualifies a metric: a function word, the company's own name, a month, a change, a figure."""
    w = word.strip(".'")
    base = w.removesuffix("'s").removesuffix("'")
    # "Acme-Jones" of the filer "ACME JONES CO": a name hyphenated in the question, spaced in the filing.
    owned = base in company_words or ("-" in base and all(p in company_words for p in base.split("-") if p))
    return (
        base in STOP_WORDS or w in STOP_WORDS or owned or base in MONTH_WORDS
        or bool(CHANGE_WORDS.fullmatch(base))  # "net revenue climbed": the change asked, not a part of it
        or bool(re.fullmatch(r"[\d.,$%'-]+|fy\d+|q\d|\d+(?:st|nd|rd|th)", base))
    )


def attributed(question: str, mention: MetricMention) -> bool:
    """Is the mention's figure asked as the part one thing accounts for ("tax expense attributed to the fee")?"""
    return bool(mention.after) and bool(_ATTRIBUTED.match(normalize(question), mention.end))


def _qualifiers_before(question: str, low: str, tokens: list[tuple[int, int, str]], s: int,
                       inside_mention: Callable[[int], bool], is_stop: Callable[[str], bool]) -> list[str]:
    """The words right before a metric phrase starting at `s` that name the part it is of ("<segment> net sales",
    "<region> revenue"), at most three (with the "and" of a joined name)."""
    before: list[str] = []
    prev = [t for t in tokens if t[1] <= s]
    taken_at = s  # where the last word taken as a qualifier starts
    for k in range(len(prev) - 1, -1, -1):
        ts, te, w = prev[k]
        # A capitalised word running on into a capitalised qualifier is part of one name ("Western Region").
        proper = question[ts:ts + 1].isupper() and before and question[taken_at:taken_at + 1].isupper()
        if inside_mention(ts) or len(without_conjunction(before)) >= 3:
            break
        # A part's name that joins two words ("repair services and parts revenue") runs on back through
        # "and" to a word that could qualify the metric too; "sales and operating income" joins two metrics.
        joins = w in _CONJUNCTION and before and k > 0 and not (
            is_stop(prev[k - 1][2]) or inside_mention(prev[k - 1][0]) or prev[k - 1][2].endswith(("'s", "s'"))
            or any(ch in low[prev[k - 1][1]:ts] for ch in ",;:()?"))
        if is_stop(w) and not joins and not (proper and w in STOP_WORDS and w not in _CORE_STOP):
            break
        if w.endswith(("'s", "s'")):
            break  # "Acme's revenue": a possessive before the metric names its owner, not a qualifier
        gap = low[te:taken_at]
        # "ACMK (Class C) shares": a bracket closed right before the metric holds the part it names.
        bracketed = not before and gap.strip() == ")"
        if gap.strip(" -") and any(ch in gap for ch in ",;:()?") and not bracketed:
            break
        before.insert(0, plain_word(w))
        taken_at = ts
    return before


def find_mentions(question: str, company_words: set[str] = frozenset()) -> list[MetricMention]:
    """Metric phrases in the question, longest first without overlaps, with the words that qualify them."""
    low = normalize(question)
    chosen, classes = _metric_phrases(low)
    tokens = [(t.start(), t.end(), t.group()) for t in WORD_PATTERN.finditer(low)]
    spans = [(s, e) for s, e, _ in chosen]

    # Words that are never a metric's qualifier: a period's, and the home country ruled out before the metric
    # ("non-U.S. revenue", see _NON_HOME).
    not_parts = [(m.start(), m.end()) for rx in (_PERIOD_WORDS, _NON_HOME, _STATEMENT_NAMES) for m in rx.finditer(low)]
    ruled_out = exclusions(low)
    # "Revenue before client incentives are deducted": the adjustment's own line is not the figure asked.
    deducted = [(s, e) for s, e, _words in deductions(low)]

    def inside_mention(pos: int) -> bool:
        return any(s <= pos < e for s, e in spans) or any(s <= pos < e for s, e in not_parts)

    def is_stop(word: str) -> bool:
        return _no_qualifier(word, company_words)

    out = []
    for s, e, m in chosen:
        inner = [(cs, ce) for cs, ce in classes if s < cs and ce < e]
        words = [t[2] for t in tokens if s <= t[0] < e and not any(cs <= t[0] < ce for cs, ce in inner)]
        # Words right after the phrase that give it another meaning ("how much cash did it return").
        vetoed = (m.key in VETOES and follows(VETOES[m.key], low, e)) or any(ds <= s < de for ds, de in deducted)
        mention = MetricMention(m.key, s, e, words, vetoed=vetoed)
        portion = _PORTION_BEFORE.search(low, 0, s)
        if portion and m.period == "instant":
            mention.portion = "current" if portion.group(1) == "current" else "noncurrent"
            not_parts.append(portion.span(1))  # the portion is no qualifier of the metric
        if inner:
            mention.before = low[inner[0][0]:inner[0][1]].split()
            out.append(mention)
            continue
        mention.before = _qualifiers_before(question, low, tokens, s, inside_mention, is_stop)
        # "tax expense attributed to the termination fee": the part of the figure that one thing accounts for,
        # named after "to" as a part is after "from".
        attributed = _ATTRIBUTED.match(low, e)
        nxt = [t for t in tokens if t[0] >= (attributed.end() if attributed else e)]
        if nxt:
            gap = low[e:nxt[0][0]]
            first = "from" if attributed else nxt[0][2]
            # "revenue excluding leasing", "sales (excl. fuel)": what the metric itself leaves out.
            following = [words for start, _end, words in ruled_out if not low[e:start].strip(" (")]
            if following:
                mention.excluded = [plain_word(w) for w in following[0].split() if not is_stop(w)]
            elif first in _PREPS and not any(ch in gap for ch in ",;:?"):
                for k, (ts, _te, w) in enumerate(nxt[1:6], start=1):
                    base = w.strip(".'").removesuffix("'s").removesuffix("'")
                    # "of the ...", "of Acme's North America segment": the owner is not the qualifier.
                    if base in ("the", "its", "their", "our") or (base in company_words and base != w):
                        continue
                    # "from repair services and parts": a name that joins two words runs on through
                    # "and" (member_matcher compares names without it); "and" before a clause word ends it.
                    joins = base in _CONJUNCTION and mention.after and k + 1 < len(nxt) and not (
                        is_stop(nxt[k + 1][2]) or inside_mention(nxt[k + 1][0]))
                    # "at year-end": a hyphenated period word is as unqualifying as its parts.
                    ok = all(part in _AFTER_OK for part in base.split("-"))
                    if not joins and (inside_mention(ts) or ok or base in _PREPS
                                      or (is_stop(w) and base not in STOP_WORDS)):
                        break
                    mention.after.append(plain_word(w))
            elif first == "per" and m.kind != "per_share":
                # "per employee" makes a rate; "per the cover", "per its 10-K" only says where it is read.
                if not (len(nxt) > 1 and nxt[1][2] in ("the", "its", "their", "our")):
                    mention.after.append("per")
            elif (not any(ch in gap for ch in ",;:()?.") and not is_stop(first) and not inside_mention(nxt[0][0])
                  and not _PAST_TENSE.fullmatch(first)  # "retained earnings flipped negative": a verb, no part
                  # "SG&A expenses", "R&D expense": the metric's own kind, written after its short form, is no part.
                  and plain_word(first) not in {plain_word(w) for w in m.label.lower().split()}):
                mention.after.append(plain_word(first))
        out.append(mention)
    return out


_CONJUNCTION = {"and", "&"}


def without_conjunction(words: list[str]) -> list[str]:
    return [w for w in words if w not in _CONJUNCTION]


def initials(words: list[str]) -> list[str]:
    """A member's name as its initials ("Acme Cloud Services" -> "acs"), as filings and analysts abbreviate a
    segment of three words or more; empty for shorter names, whose initials would name too much."""
    return ["".join(w[0] for w in words)] if len(words) >= 3 else []


# Words that say what kind of part of a company a member is; filings name the member without them.
PART_KIND_WORDS = {plain_word(w) for w in "segment segments region regions division divisions unit units".split()}


def member_matcher(mention: MetricMention):
    """A scorer of a fact's single dimension member: the length of the run of the question's words, covering every
    qualifier word, that the member's words (or a row label printed beside its figure) equal, half a letter less
    when the words only abbreviate them; 0 for none."""
    quals = mention.before + mention.after
    if not quals:
        return None
    # "the North America segment", "the Asia Pacific region": the kind of part, said after its name, is not part
    # of the name the filing gives the member.
    before = [w for w in mention.before if w not in PART_KIND_WORDS] or mention.before
    after = [w for w in mention.after if w not in PART_KIND_WORDS] or mention.after
    phrase = [plain_word(w) for w in mention.words]
    seq = before + phrase if before else phrase + after
    if before and after:
        seq = before + phrase + after
    # A name joined by "and" is printed with "&" as often ("Tools & Hardware"), and the question's qualifier
    # words hold neither: names compare without the conjunction.
    seq = without_conjunction(seq)
    need = set(before + after) - _CONJUNCTION
    windows, word_windows = [], []
    for i in range(len(seq)):
        for j in range(i + 1, min(len(seq), i + 7) + 1):
            win = seq[i:j]
            if need <= set(win):
                # A hyphen is no part of a member's name: "Class B-1" is CommonClassB1Member.
                windows.append("".join(win).replace("-", ""))
                word_windows.append(win)
    excluded = set(mention.excluded)

    def words_of(dims: dict) -> list[str]:
        return [plain_word(w) for w in member_words(next(iter(dims.values())))]

    def match(dims: dict, row_labels: Iterable[str] = ()) -> float:
        """How long a run of the question's words names the member: by the member's own words, or by a row label
        the filing prints beside its figure (a member named "Acme Cloud Services" printed as "ACS")."""
        best = 0
        own = without_conjunction(words_of(dims))
        labels = [without_conjunction([plain_word(w) for w in normalize(label).split()]) for label in row_labels]
        # A member whose own name says its kind ("All Other Segments") is named without it, as the qualifier is.
        bare = [w for w in own if w not in PART_KIND_WORDS]
        bare = bare if len(bare) >= 2 else []  # "Other Segments" is not named by "other" alone
        for mw in [own, bare, group_words(own), initials(own), class_words(own)] + labels:
            joined = "".join(mw)
            if joined and not (excluded & set(mw)):
                best = max(best, max((len(w) for w in windows if w == joined), default=0))
                # Each word cut short, as analysts write names ("cons prod" for Consumer Products); a name written
                # out in full beats one it only starts ("Acme" is the "Total Acme" group, not "Acmehealth").
                best = max(best, max((len("".join(w)) - 0.5 for w in word_windows if _abbreviates(w, mw)),
                                     default=0))
        return best

    return match


def _abbreviates(words: list[str], name: list[str]) -> bool:
    """Do the words write the name word for word, some cut short to their first three letters or more ("cons
    prod" for "consumer products")? At least one must be cut: the name written out is matched as it is."""
    return len(words) == len(name) and words != name and all(
        n == w or (len(w) >= 3 and n.startswith(w)) for w, n in zip(words, name, strict=True))


def is_metric_phrase(text: str) -> bool:
    """Is the whole text one of the metric phrases ('EBITDA' is not, 'COGS', 'ROE' and 'SG&A' are)."""
    return bool(PHRASEBOOK.fullmatch(normalize(text).strip()))
