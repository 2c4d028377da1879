"""What the index holds, as a question names it: the indexed companies (tickers, every name they go by, the proper
nouns one company's filings own, abbreviations) with their fiscal years and periods, and which of them a question
names (the longest name first; a name several filers share is ambiguous), or names without their being indexed.
The question plan (rag.question) reads companies through it."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .companies import WORD_PATTERN, CompanyNames, NameMatch, company_words, name_words, short_names
from .dates import MONTH_WORDS
from .facts import is_metric_phrase, normalize
from .index import WordUses, fiscal_period_of, word_uses
from .schema import QuestionPlan
from .words import SPELLED_OUT, STOP_WORDS

# Capitalised words that start sentences or name roles, units and form parts: never a company.
STOP_CAPS = {
    "What", "Which", "Who", "When", "Where", "Why", "How", "Does", "Did", "Do", "Is", "Are", "Was", "Were", "The",
    "In", "On", "Of", "For", "And", "Or", "Under", "From", "To", "By", "As", "At", "Its", "It", "A", "An", "If",
    "Item", "Items", "Form", "Part", "Fiscal", "FY", "Total", "Net", "SEC", "US", "U.S.", "GAAP", "Company",
    "Inc", "Corp", "Annual", "Report", "Compare", "List", "Give", "Show", "Tell", "Please", "Will", "Should",
    "Can", "Could", "Would", "Has", "Have", "Had", "Between", "During", "Over", "Both", "Each", "All", "Any",
    "Q1", "Q2", "Q3", "Q4", "CEO", "CFO", "EPS", "USD", "Note", "Notes", "Board", "Directors",
    "Summarize", "Describe", "Explain", "Identify", "Calculate", "Compute", "Find", "Provide", "Name", "Assume",
    "Using", "Based", "According", "Per", "Given", "Discuss", "Analyze", "Outline", "Estimate", "Rank",
} | {m.capitalize() for m in MONTH_WORDS}


@dataclass
class Catalog:
    """What the index holds, for turning words in a question into exact filters."""

    filings: list[dict]
    aliases: dict[str, str]  # lower-case ticker, or a name one filer alone goes by -> ticker
    years_by_ticker: dict[str, list[int]]
    distinctive: dict[str, str]  # capitalised word that one company's filings own -> ticker
    name_words: dict[str, list[str]] = field(default_factory=dict)  # ticker -> words of its shortest name
    company_names: set[str] = field(default_factory=set)  # the aliases that are names, not only tickers
    # Every word of the indexed companies' names and tickers (never a metric's qualifier), and name -> ticker as
    # the facts layer matches them.
    words: set[str] = field(default_factory=set)
    word_aliases: dict[str, str] = field(default_factory=dict)
    # Tickers the indexed text writes in lower case as a word of its own: those are words, not the ticker (a ticker
    # that is also an everyday word), so a question's lower-case form of them names no company.
    lowercase_words: set[str] = field(default_factory=set)
    # The owned words the indexed text never writes in lower case, in lower case -> ticker: a question typed in
    # lower case still names its company by them ("why did <brand>'s headcount drop").
    owned_lowercase: dict[str, str] = field(default_factory=dict)
    # Every word the indexed text writes, in lower case: a ticker-like word outside it names no indexed company.
    text_words: set[str] = field(default_factory=set)
    # ticker -> (period end, fiscal year, fiscal period) of each indexed filing, oldest first; and every fiscal
    # period the index holds ("Q1".."Q3", "FY").
    periods_by_ticker: dict[str, list[tuple[str, int, str]]] = field(default_factory=dict)
    indexed_periods: set[str] = field(default_factory=set)
    # Every name the filers go by, in full and by leading words (rag.companies.CompanyNames); the words of those
    # names the indexed text writes as names (nearly always capitalised, mostly in the filings of the filers whose
    # names hold them: see _name_like); and those it also writes in lower case (every one, when no text is known),
    # which a question's lower-case leading words then do not name a filer by.
    names: CompanyNames = field(default_factory=lambda: CompanyNames([]))
    name_like: set[str] = field(default_factory=set)
    lowercase_names: set[str] = field(default_factory=set)

    def is_own_name(self, text: str) -> bool:
        """Is the text a name an indexed filer goes by (not a brand its filings own)?"""
        return " ".join(w for w, _start, _end in name_words(text)) in self.aliases

    @classmethod
    def build(cls, filings: list[dict], nodes=(), uses: WordUses | None = None) -> "Catalog":
        """The catalog of these filings; how their text writes its words comes from `uses` (the loaded index's
        word_uses()), else is counted from `nodes`."""
        aliases: dict[str, str] = {}
        years: dict[str, set[int]] = defaultdict(set)
        name_words: dict[str, list[str]] = {}
        names = CompanyNames(filings)
        for f in filings:
            ticker = (f.get("ticker") or "").upper()
            if not ticker:
                continue
            aliases[ticker.lower()] = ticker
            short = short_names(f.get("company") or "")
            if short:
                name_words.setdefault(ticker, re.findall(r"[a-z0-9]+|&", min(short, key=len)))
            if f.get("fiscal_year"):
                years[ticker].add(int(f["fiscal_year"]))
        for key, entry in names.entries.items():
            if len(entry.owners()) == 1:
                aliases.setdefault(" ".join(key), entry.owners()[0])
        # A ticker that is also a filer's name or its name's first word ("Acme" of ACME): a name as written.
        company_names = {key[0] for key, entry in names.entries.items()
                         if len(key) == 1 and any(t.lower() == key[0] for t in entry.full | entry.leading)}
        words, word_aliases = company_words(filings)
        uses = uses if uses is not None else word_uses(nodes)
        name_like, lowercase_names = _name_like(names, uses)
        # Tickers the text also uses as everyday lower-case words name no company in lower case.
        lowercase = {t.lower() for t in aliases.values() if t.isalpha()} & uses.lowercase_uses.keys()
        periods: dict[str, set[tuple[str, int, str]]] = defaultdict(set)
        for f in filings:
            period = fiscal_period_of(f)
            if f.get("ticker") and f.get("fiscal_year") and period:
                periods[str(f["ticker"]).upper()].add((str(f.get("period_end") or ""), int(f["fiscal_year"]), period))
        distinctive = _distinctive_words(uses)
        return cls(
            filings=list(filings),
            aliases=aliases,
            years_by_ticker={t: sorted(y) for t, y in years.items()},
            distinctive=distinctive,
            name_words=name_words,
            company_names=company_names,
            words=words,
            word_aliases=word_aliases,
            lowercase_words=lowercase,
            owned_lowercase={w.lower(): t for w, t in distinctive.items() if w.lower() not in uses.lowercase_uses},
            # With one company indexed, a question naming none is about it, whatever words it shouts.
            text_words=uses.every if len(uses.capitalised) >= 2 else set(),
            periods_by_ticker={t: sorted(held) for t, held in periods.items()},
            indexed_periods={p for held in periods.values() for _e, _y, p in held},
            names=names,
            name_like=name_like,
            lowercase_names=lowercase_names,
        )


# A name is capitalised at least this many times for each time the text writes it in lower case ("advanced" of
# "Advanced ..." is an everyday word too; a filer's coined name is almost never written in lower case).
_NAME_CASE_RATIO = 20


def _name_like(names: CompanyNames, uses: WordUses) -> tuple[set[str], set[str]]:
    """(the words of the filers' names that the indexed text writes as names, those of them it also writes in lower
    case). A word reads as a name when the text capitalises it nearly always (_NAME_CASE_RATIO) and at least half of
    its capitalised uses are in the filings of the filers whose names hold it: "Northwind" of two Northwind filers
    is a name; "General" (of "General and administrative") or "United" (of "United States") that opens one filer's
    name is not. A word the text never writes reads as a name (no text says otherwise)."""
    owners: dict[str, set[str]] = defaultdict(set)
    for key, entry in names.entries.items():
        for word in key:
            owners[word].update(entry.full)
    capitalised, own = Counter(), Counter()
    for ticker, counts in uses.capitalised.items():
        for word, n in counts.items():
            low = word.lower()
            if low in owners:
                capitalised[low] += n
                own[low] += n if ticker in owners[low] else 0
    lower = uses.lowercase_uses
    like = {w for w in owners if (capitalised[w] >= _NAME_CASE_RATIO * lower[w] and 2 * own[w] >= capitalised[w] > 0)
            or not (capitalised[w] or lower[w])}
    return like, {w for w in owners if w in uses.lowercase_uses or not uses.capitalised}


def _distinctive_words(uses: WordUses) -> dict[str, str]:
    """Proper nouns that (nearly) only one company's filings use, often: a brand other than its legal name, or
    a product's name. Learned from the indexed text, so it works for any company without an alias list."""
    if len(uses.capitalised) < 2:
        return {}
    totals: Counter = Counter()
    for counts in uses.capitalised.values():
        totals.update(counts)
    owned = {}
    for ticker, counts in uses.capitalised.items():
        for word, n in counts.items():
            if n < 0.9 * totals[word] or word in STOP_CAPS:
                continue
            # A company's best-known brand is written less often than its name (a brand's short form beside it): a
            # word used less often must also read as a name, never written in lower case (not "Previous" or
            # "Factory" opening sentences) and never opening another company's name ("Globex Beverage").
            is_name = word.lower() not in uses.lowercase_uses and word not in uses.entity_heads
            if n >= 25 or (n >= 15 and is_name):
                owned[word] = ticker
    return owned


_JOINERS = {"&": ("&", "n", "and"), "and": ("&", "n", "and")}
_SMALL_WORDS = {"of", "the"}


def abbreviates(token: str, words: list[str]) -> bool:
    """Is `token` a short form of a multi-word name: 'ACWI' (ACme WIdgets), 'SnJ' and 'S&J' (Smith &
    Jones), 'BofX' (Bank of Xanadu)? Every word of the name gives the token its first letters, in order; '&' or 'and'
    may be written '&', 'n' or left out, 'of' and 'the' may be left out."""
    text = token.lower()
    if len([w for w in words if w not in _JOINERS and w not in _SMALL_WORDS]) < 2:
        return False

    def match(i: int, j: int) -> bool:
        if j == len(words):
            return i == len(text)
        word = words[j]
        if word in _JOINERS:
            return match(i, j + 1) or any(text.startswith(alt, i) and match(i + len(alt), j + 1)
                                          for alt in _JOINERS[word])
        if word in _SMALL_WORDS and match(i, j + 1):
            return True
        return any(text.startswith(word[:n], i) and match(i + n, j + 1) for n in range(len(word), 0, -1))

    return match(0, 0)


def _abbreviated_company(token: str, catalog: Catalog) -> str | None:
    """The one indexed company a written-short name stands for. Only tokens an abbreviation looks like (two or more
    capitals: 'ACWI', 'SnJ', 'S&J'), never a metric's own short form ('EBITDA', 'COGS')."""
    if len(token) < 3 or sum(c.isupper() for c in token) < 2 or token in STOP_CAPS:
        return None
    if is_metric_phrase(token):
        return None
    hits = {t for t, words in catalog.name_words.items() if abbreviates(token, words)}
    return hits.pop() if len(hits) == 1 else None


def _names_a_filer(q: str, match: NameMatch, words: list[tuple[str, int, int]], catalog: Catalog) -> bool:
    """Does a name the filers go by name one where the question writes it? A full name does (one of four letters or
    fewer that is also its filer's ticker is read as tickers are). Leading words do when one of them reads as a name
    in the indexed text (Catalog.name_like), or when the question capitalises each of two or more, and they are not
    part of another name written in capitals ("Union" of "European Union", "Acme" of "Acme Rail" when Acme Rail
    is not indexed); typed in lower case, only when the indexed text never writes that name in lower case."""
    written = q[match.start:match.end]
    if len(match.words) == 1 and len(written) <= 4 and written.lower() in catalog.company_names:
        return False
    if match.entry.full:
        return True
    if _inside_another_name(q, match, words):
        return False
    named = [w for w in match.words if w in catalog.name_like]
    if written.islower():
        return bool(named) and not any(w in catalog.lowercase_names for w in named)
    capitalised = all(not q[start].islower() for _w, start, _e in words[match.index:match.index + len(match.words)])
    return bool(named) or (len(match.words) > 1 and capitalised)


def _inside_another_name(q: str, match: NameMatch, words: list[tuple[str, int, int]]) -> bool:
    """Leading words of a filer's name written capitalised right after a capitalised word, or one such word right
    before one (not a question's word, a metric's or a word in capitals): they are part of another name."""
    if q[match.start].islower():
        return False
    last = match.index + len(match.words) - 1
    beside = [words[match.index - 1]] if match.index else []
    beside += [words[last + 1]] if len(match.words) == 1 and last + 1 < len(words) else []
    for _word, start, end in beside:
        gap = q[end:match.start] if end <= match.start else q[match.end:start]
        other = q[start:end]
        if not gap.strip() and other[:1].isupper() and not other.isupper() and other not in STOP_CAPS \
                and not is_metric_phrase(other):
            return True
    return False


def _standing_alone(word: str, text: str):
    """The places `text` writes `word` as a word of its own, case as given (not inside a word or a hyphenation)."""
    return re.finditer(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text)


def find_companies(q: str, low: str, catalog: Catalog, plan: QuestionPlan) -> list[tuple[int, int]]:
    """Companies by name (the longest any filer goes by at each place; one several filers go by is ambiguous), then
    by ticker, by a word one company owns, by a short form: fills plan.tickers in question order, the ticker spans
    and plan.ambiguous_companies; returns every span taken by a company's name or ticker."""
    found: list[str] = []
    first_at: dict[str, int] = {}
    spans: list[tuple[int, int]] = []

    def take(start: int, end: int, ticker: str) -> None:
        spans.append((start, end))
        plan.spans.append((start, end, "ticker", ticker))
        if ticker not in found:
            found.append(ticker)
            first_at[ticker] = start

    def taken(pos: int) -> bool:
        return any(s <= pos < e for s, e in spans)

    for match in catalog.names.find(q, lambda m, words: _names_a_filer(q, m, words, catalog)):
        if len(match.entry.owners()) == 1:
            take(match.start, match.end, match.entry.owners()[0])
        else:  # a name several filers go by: asked back, not guessed
            spans.append((match.start, match.end))
            plan.ambiguous_companies.setdefault(q[match.start:match.end], match.entry.owners())
    lower_later: list[tuple[re.Match, str]] = []
    for name in sorted((a for a, t in catalog.aliases.items() if a == t.lower()), key=len, reverse=True):
        pattern = r"(?<![\w-])" + re.escape(name) + r"(?![\w-])"
        ticker_only = len(name) <= 4
        # Short tickers must be written in capitals ('MA', 'V'), or they match ordinary words; a short name that
        # is also the ticker ('Acme' of ACME) counts when capitalised, as names are written.
        if ticker_only:
            hits = list(_standing_alone(name.upper(), q))
            if name in catalog.company_names:
                # A name is written with a capital somewhere, as its owner writes it ("Acme", "eBay"); all in
                # lower case it may be a word, and is read as a ticker only as below.
                hits += [m for m in re.finditer(pattern, q, re.I)
                         if not m.group().islower() and not m.group().isupper()]
            # Written in lower case as analysts type tickers ("acme capex fy25", "xy opex 24"): any ticker of two
            # letters or more opening the question; later in it, one of three or more that the filings never use
            # as a word of their own, when the question names its companies by such tickers alone ("how does
            # Acme's xyz ..." names Acme only). A name that is its own ticker ("acme") is written capitalised.
            for m in _standing_alone(name, q) if name not in catalog.company_names else []:
                if len(name) >= 2 and not q[:m.start()].strip():
                    hits.append(m)
                elif len(name) >= 3 and name not in catalog.lowercase_words:
                    lower_later.append((m, name))
        else:
            hits = list(re.finditer(pattern, low))
        for m in hits:
            if not taken(m.start()):
                take(m.start(), m.end(), catalog.aliases[name])
    for m in re.finditer(r"\b[A-Z][a-z]+[A-Za-z]*\b", q):
        ticker = catalog.distinctive.get(m.group())
        if not taken(m.start()) and ticker and ticker not in found:
            take(m.start(), m.end(), ticker)
    # A terse question typed in lower case opens with the name ("<brand> cloud operating income FY2024?").
    opening = re.match(r"\s*([a-z][a-z]+)\b", q)
    if opening and not taken(opening.start(1)):
        ticker = catalog.distinctive.get(opening.group(1).capitalize())
        if ticker and ticker not in found:
            take(opening.start(1), opening.end(1), ticker)
    for m in re.finditer(r"(?<![\w&])[A-Za-z][A-Za-z&]{1,9}(?![\w&])", q):  # short forms: 'ACWI', 'SnJ'
        if not taken(m.start()):
            ticker = _abbreviated_company(m.group(), catalog)
            if ticker:
                take(m.start(), m.end(), ticker)
    # Later in a question that names no company otherwise, an owned name typed in lower case names its company
    # ("why did <brand>'s headcount drop"), when the filings never write that word in lower case themselves.
    for m in re.finditer(r"\b[a-z]{2,}\b", q) if not found else []:
        ticker = catalog.owned_lowercase.get(m.group())
        if ticker and not taken(m.start()):
            take(m.start(), m.end(), ticker)
            break
    # Lower-case tickers later in the question count when it names its companies by them alone.
    by_lowercase = all(q[start:end].islower() for start, end in spans)
    for m, name in lower_later if by_lowercase else []:
        if not taken(m.start()):
            take(m.start(), m.end(), catalog.aliases[name])
    plan.tickers = sorted(found, key=first_at.get)  # in the order the question names them
    return spans


# A ticker as analysts type it: two to five letters, in capitals anywhere ("XYZ net income") or in lower case
# opening a terse question ("xyz revenue fy24"); and a company's name typed in lower case, opening a terse
# question ("acme membership fee revenue fiscal 2024") or as a possessive anywhere ("what was acme's revenue").
_TICKER_LIKE = re.compile(r"(?<![\w&.-])[A-Z]{2,5}(?![\w&.-])|^\s*[a-z]{2,5}(?![\w&.'’-])|"
                          r"^\s*[a-z][a-z&-]{5,24}(?=['’]s\b|\s)|(?<![\w&.'’-])[a-z][a-z&-]{1,24}(?=['’]s\b)")


def _unknown_tickers(q: str, catalog: Catalog) -> list[str]:
    """Ticker-like words of a question that names no indexed company, when the indexed text never writes them and
    they are no metric's short form: the ticker of a company not indexed. Answered from the index, its figures
    would be another company's."""
    if not catalog.text_words:
        return []
    out = []
    for m in _TICKER_LIKE.finditer(q):
        word = m.group().strip()
        low = word.lower()
        if word in STOP_CAPS or word.capitalize() in STOP_CAPS or low in STOP_WORDS or low in MONTH_WORDS:
            continue
        if low in catalog.text_words or low in SPELLED_OUT or is_metric_phrase(word):
            continue
        out.append(word)
    return out


def unknown_companies(q: str, spans: list[tuple[int, int]], catalog: Catalog) -> list[str]:
    """Names used like a company that no indexed filing matches ("Globex's", "Acme Corp"), and, in a question
    that names no indexed company, tickers of none ("XYZ net income 2024")."""
    out = [] if spans else _unknown_tickers(q, catalog)
    # The possessive of a name ending in "s" may be the apostrophe alone: "Globex Electronics' memory division".
    for m in re.finditer(r"\b([A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*)"
                         r"(?:'s|’s|(?<=s)['’](?!\w)|\s+(?:Inc|Corp|Corporation|Co)\b)", q):
        # The name is the run of capitalised words right before the possessive: "Are <Company>'s" and "Summarize
        # <Company>'s" name a known company (nothing unknown), "Compare Acme Widgets'" names Acme Widgets.
        words: list[str] = []
        runs_on = False  # "<Company> Health's", "<Brand> Cloud's": a known company's name running on names its part
        for w in reversed(list(re.finditer(r"\S+", m.group(1)))):
            runs_on = any(s <= m.start(1) + w.start() < e for s, e in spans)
            if w.group() in STOP_CAPS or runs_on:
                break
            words.insert(0, w.group())
        if not words or runs_on:
            continue
        # "the EU's rules", "the SEC's", "the Fed's": a name the question writes after "the" is a body or a place
        # (a company is written bare: "Globex's"), so no filer is missing from the index.
        if re.search(r"\bthe\s+$", q[:m.start(1) + m.group(1).find(words[0])]):
            continue
        name = normalize(" ".join(words))
        # Every word belongs to an indexed company's name or ticker: a known company written another way.
        if name in catalog.word_aliases or set(WORD_PATTERN.findall(name)) <= catalog.words:
            continue
        # A name that opens with a word one indexed company's filings own ("<Brand> Cloud's" beside "<Company>'s"):
        # a part of that company, not a company missing from the index.
        if catalog.distinctive.get(words[0]):
            continue
        out.append(" ".join(words))
    return out
