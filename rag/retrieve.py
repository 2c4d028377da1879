"""Query analysis and hybrid retrieval over the index: dense (FAISS), keyword (BM25) or both fused."""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import bm25s
import numpy as np
from llama_index.core.retrievers import BaseRetriever, QueryFusionRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import VectorStoreQuery
from llama_index.retrievers.bm25 import BM25Retriever

from .index import keyword_stemmer
from .schema import MODES, Filters, QuestionPlan, RetrievalResult

# ==============================================================================================================
# Query analysis



_CORP_SUFFIX = re.compile(
    r"[,.]?\s+(inc|incorporated|corp|corporation|co|company|ltd|limited|plc|llc|l\.?p|n\.?v|s\.?a|holdings?|"
    r"group|platforms|the)\.?$",
    re.I,
)
_MONTHS = ("january february march april may june july august september october november december").split()
_SECTION_WORDS = [
    (r"\bitem\s+(1[0-6]|[1-9])([abc])?\b", None),  # explicit "Item 7A"
    (r"\brisk\s+factors?\b", "Item 1A"),
    (r"\bunresolved\s+staff\s+comments?\b", "Item 1B"),
    (r"\bcybersecurity\b", "Item 1C"),
    (r"\blegal\s+proceedings?\b", "Item 3"),
    (r"\bmine\s+safety\b", "Item 4"),
    (r"\bmarket\s+for\s+(the\s+)?registrant", "Item 5"),
    (r"\bmd&a\b|\bmanagement'?s\s+discussion\b", "Item 7"),
    (r"\bquantitative\s+and\s+qualitative\s+disclosures?\b", "Item 7A"),
    (r"\bcontrols\s+and\s+procedures\b", "Item 9A"),
    (r"\bexecutive\s+compensation\b", "Item 11"),
    (r"\bprincipal\s+account(ant|ing)\s+fees\b", "Item 14"),
]
_STATEMENT_WORDS = [
    (r"\bincome\s+statements?\b|\bstatements?\s+of\s+(?:operations|income|earnings)\b|\bp\s*&\s*l\b|"
     r"\bprofit\s+and\s+loss\s+statement", "income statement"),
    (r"\bbalance\s+sheets?\b|\bstatements?\s+of\s+financial\s+position\b", "balance sheet"),
    (r"\bcash\s+flows?\s+statements?\b|\bstatements?\s+of\s+cash\s+flows?\b", "cash flow statement"),
]
_FORM_WORDS = [
    (r"\b10-?k\b|\bannual\s+report\b", "10-K"),
    (r"\b10-?q\b|\bquarterly\s+report\b|\bquarterly\b", "10-Q"),
]
_LATEST = re.compile(r"\b(latest|most\s+recent|last|current)\s+(fiscal\s+)?(year|annual|10-?k|filing|report)\b", re.I)
_STOP_CAPS = {
    "What", "Which", "Who", "When", "Where", "Why", "How", "Does", "Did", "Do", "Is", "Are", "Was", "Were", "The",
    "In", "On", "Of", "For", "And", "Or", "Under", "From", "To", "By", "As", "At", "Its", "It", "A", "An", "If",
    "Item", "Items", "Form", "Part", "Fiscal", "FY", "Total", "Net", "SEC", "US", "U.S.", "GAAP", "Company",
    "Inc", "Corp", "Annual", "Report", "Compare", "List", "Give", "Show", "Tell", "Please", "Will", "Should",
    "Can", "Could", "Would", "Has", "Have", "Had", "Between", "During", "Over", "Both", "Each", "All", "Any",
    "Q1", "Q2", "Q3", "Q4", "CEO", "CFO", "EPS", "USD", "Note", "Notes", "Board", "Directors",
    "Summarize", "Describe", "Explain", "Identify", "Calculate", "Compute", "Find", "Provide", "Name", "Assume",
    "Using", "Based", "According", "Per", "Given", "Discuss", "Analyze", "Outline", "Estimate", "Rank",
} | {m.capitalize() for m in _MONTHS}


def short_names(company: str) -> set[str]:
    """'Apple Inc.' -> {'apple inc.', 'apple'}; 'HOME DEPOT, INC.' -> {'home depot, inc.', 'home depot'}."""
    name = re.sub(r"\s+", " ", (company or "").strip().lower())
    name = re.sub(r"/[a-z]{2}/?$", "", name).strip()  # EDGAR's state tags: 'WELLS FARGO & COMPANY/MN'
    names = {name} if name else set()
    current = name
    while True:
        stripped = _CORP_SUFFIX.sub("", current).strip(" ,.&")
        if stripped == current or not stripped:
            break
        current = stripped
        names.add(current)
    if current.startswith("the "):
        names.add(current[4:])
    return {n for n in names if len(n) >= 3}


@dataclass
class Catalog:
    """What the index holds, for turning words in a question into exact filters."""

    filings: list[dict]
    aliases: dict[str, str]  # lower-case name -> ticker
    years_by_ticker: dict[str, list[int]]
    distinctive: dict[str, str]  # capitalised word that one company's filings own -> ticker
    name_words: dict[str, list[str]] = field(default_factory=dict)  # ticker -> words of its shortest name
    company_names: set[str] = field(default_factory=set)  # the aliases that are names, not only tickers

    @classmethod
    def build(cls, filings: list[dict], nodes=()) -> "Catalog":
        aliases: dict[str, str] = {}
        years: dict[str, set[int]] = defaultdict(set)
        name_words: dict[str, list[str]] = {}
        company_names: set[str] = set()
        for f in filings:
            ticker = (f.get("ticker") or "").upper()
            if not ticker:
                continue
            aliases[ticker.lower()] = ticker
            names = short_names(f.get("company") or "")
            for name in names:
                aliases.setdefault(name, ticker)
                aliases.setdefault(name.replace("-", " "), ticker)  # "Coca-Cola" is also written "Coca Cola"
                company_names.add(name.replace("-", " "))
                company_names.add(name)
            if names:
                name_words.setdefault(ticker, re.findall(r"[a-z0-9]+|&", min(names, key=len)))
            if f.get("fiscal_year"):
                years[ticker].add(int(f["fiscal_year"]))
        return cls(
            filings=list(filings),
            aliases=aliases,
            years_by_ticker={t: sorted(y) for t, y in years.items()},
            distinctive=_distinctive_words(nodes),
            name_words=name_words,
            company_names=company_names,
        )


def _distinctive_words(nodes) -> dict[str, str]:
    """Proper nouns that (nearly) only one company's filings use, often: 'Google' for Alphabet, 'Cybertruck'
    for Tesla. Learned from the indexed text, so it works for any company without an alias list."""
    per_ticker: dict[str, Counter] = defaultdict(Counter)
    for node in nodes:
        ticker = (node.metadata.get("ticker") or "").upper()
        if ticker:
            per_ticker[ticker].update(re.findall(r"(?<![\w.])[A-Z][a-z]+[A-Za-z]*\b", node.text))
    if len(per_ticker) < 2:
        return {}
    totals: Counter = Counter()
    for counts in per_ticker.values():
        totals.update(counts)
    owned = {}
    for ticker, counts in per_ticker.items():
        for word, n in counts.items():
            if n >= 25 and n >= 0.9 * totals[word] and word not in _STOP_CAPS:
                owned[word] = ticker
    return owned


_JOINERS = {"&": ("&", "n", "and"), "and": ("&", "n", "and")}
_SMALL_WORDS = {"of", "the"}


def abbreviates(token: str, words: list[str]) -> bool:
    """Is `token` a short form of a multi-word name: 'AMEX' (AMerican EXpress), 'JnJ' and 'J&J' (Johnson &
    Johnson), 'P&G', 'BofA'? Every word of the name gives the token its first letters, in order; '&' or 'and'
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


def _abbreviated_company(token: str, catalog: "Catalog") -> str | None:
    """The one indexed company a written-short name stands for. Only tokens an abbreviation looks like (two or more
    capitals: 'AMEX', 'JnJ', 'P&G'), never a metric's own short form ('EBITDA', 'COGS')."""
    if len(token) < 3 or sum(c.isupper() for c in token) < 2 or token in _STOP_CAPS:
        return None
    from .facts import is_metric_phrase

    if is_metric_phrase(token):
        return None
    hits = {t for t, words in catalog.name_words.items() if abbreviates(token, words)}
    return hits.pop() if len(hits) == 1 else None


def search_text(question: str, analysis: QuestionPlan, applied: "Filters") -> str:
    """The question without the words that became filters ("Salesforce's", "fiscal 2025", "10-K"): every chunk
    of the filtered filings carries them in its header, so they only blur what the rest of the question asks."""
    values = {"ticker": set(applied.tickers), "fiscal_year": set(applied.fiscal_years), "form": set(applied.forms)}
    out, last = [], 0
    for start, end, dimension, value in sorted(analysis.spans):
        if start < last or value not in values.get(dimension, ()):
            continue
        out.append(question[last:start])
        last = end
    out.append(question[last:])
    text = re.sub(r"(?<!\w)(?:'s|’s|')(?!\w)", " ", "".join(out))  # the possessive left by a removed name
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(re.findall(r"\w{3,}", text)) >= 2 else question


def analyze(question: str, catalog: Catalog) -> QuestionPlan:
    q = question
    low = q.lower()
    analysis = QuestionPlan()

    # Companies: names and tickers of indexed filings (longest names first), then words one company owns.
    found: list[str] = []
    first_at: dict[str, int] = {}
    spans: list[tuple[int, int]] = []
    for name in sorted(catalog.aliases, key=len, reverse=True):
        pattern = r"(?<![\w-])" + re.escape(name) + r"(?![\w-])"
        ticker_only = len(name) <= 4 and name.upper() == catalog.aliases[name]
        flags = 0 if ticker_only else re.I
        # Short tickers must be written in capitals ('MA', 'V'), or they match ordinary words; a short name that
        # is also the ticker ('Nike' of NIKE, 'Meta' of META) counts when capitalised, as names are written.
        target = q if flags == 0 else low
        probe = name.upper() if flags == 0 else name
        hits = list(re.finditer(pattern if flags else r"(?<![\w-])" + re.escape(probe) + r"(?![\w-])", target))
        if ticker_only and name in catalog.company_names:
            hits += [m for m in re.finditer(r"(?<![\w-])" + re.escape(name.capitalize()) + r"(?![\w-])", q)]
        for m in hits:
            if any(s <= m.start() < e for s, e in spans):
                continue
            spans.append((m.start(), m.end()))
            ticker = catalog.aliases[name]
            analysis.spans.append((m.start(), m.end(), "ticker", ticker))
            if ticker not in found:
                found.append(ticker)
                first_at[ticker] = m.start()
    for m in re.finditer(r"\b[A-Z][a-z]+[A-Za-z]*\b", q):
        if any(s <= m.start() < e for s, e in spans):
            continue
        ticker = catalog.distinctive.get(m.group())
        if ticker and ticker not in found:
            found.append(ticker)
            first_at[ticker] = m.start()
            spans.append((m.start(), m.end()))
            analysis.spans.append((m.start(), m.end(), "ticker", ticker))
    for m in re.finditer(r"(?<![\w&])[A-Za-z][A-Za-z&]{1,9}(?![\w&])", q):  # short forms: 'AMEX', 'JnJ'
        if any(s <= m.start() < e for s, e in spans):
            continue
        ticker = _abbreviated_company(m.group(), catalog)
        if ticker:
            spans.append((m.start(), m.end()))
            analysis.spans.append((m.start(), m.end(), "ticker", ticker))
            if ticker not in found:
                found.append(ticker)
                first_at[ticker] = m.start()
    analysis.tickers = sorted(found, key=first_at.get)  # in the order the question names them

    # Names used like a company that no indexed filing matches ("Microsoft's", "Acme Corp").
    for m in re.finditer(r"\b([A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*)(?:'s|’s|\s+(?:Inc|Corp|Corporation|Co)\b)", q):
        # The name is the run of capitalised words right before the possessive: "Are Apple's" and "Summarize
        # Nike's" name a known company (nothing unknown), "Compare Acme Widgets'" names Acme Widgets.
        words: list[str] = []
        for w in reversed(list(re.finditer(r"\S+", m.group(1)))):
            if w.group() in _STOP_CAPS or any(s <= m.start(1) + w.start() < e for s, e in spans):
                break
            words.insert(0, w.group())
        if words:
            analysis.unknown_companies.append(" ".join(words))

    # Fiscal years.
    years: list[int] = []
    date_spans: list[tuple[int, int]] = []
    for m in re.finditer(
        r"\b(" + "|".join(_MONTHS) + r")\s+(\d{1,2}),?\s+((?:19|20)\d{2})\b", low
    ):  # a period-end date names one filing exactly
        iso = f"{m.group(3)}-{_MONTHS.index(m.group(1)) + 1:02d}-{int(m.group(2)):02d}"
        match = [f for f in catalog.filings if f.get("period_end") == iso and f.get("fiscal_year")]
        year = int(match[0]["fiscal_year"]) if match else int(m.group(3))
        date_spans.append(m.span())  # kept in the search text: "as of January 31, 2025" is worded so in filings
        if year not in years:
            years.append(year)
    for m in re.finditer(r"\b(?:fy|fiscal(?:\s+year)?)\s*'?(\d{2}|\d{4})\b|\b((?:19|20)\d{2})\b", low):
        if any(s <= m.start() < e for s, e in date_spans):
            continue
        raw = m.group(1) or m.group(2)
        year = int(raw) + (2000 if len(raw) == 2 else 0)
        analysis.spans.append((m.start(), m.end(), "fiscal_year", year))
        if year not in years:
            years.append(year)
    if not years and _LATEST.search(q):
        pool = found or list(catalog.years_by_ticker)
        latest = [max(catalog.years_by_ticker[t]) for t in pool if catalog.years_by_ticker.get(t)]
        if found:
            years = sorted(set(latest))
        elif latest:
            years = [max(latest)]
    analysis.fiscal_years = years

    forms = {f.get("form") for f in catalog.filings}
    for pattern, form in _FORM_WORDS:
        for m in re.finditer(pattern, low):
            if form not in forms:
                break
            analysis.spans.append((m.start(), m.end(), "form", form))
            if form not in analysis.forms:
                analysis.forms.append(form)

    for pattern, statement in _STATEMENT_WORDS:
        if re.search(pattern, low) and statement not in analysis.statements:
            analysis.statements.append(statement)
    if not analysis.statements:  # none named: the statements that print the figures the question asks for
        from .facts import statements_asked_for

        analysis.statements = statements_asked_for(q)

    for pattern, item in _SECTION_WORDS:
        for m in re.finditer(pattern, low):
            name = item or f"Item {m.group(1)}{(m.group(2) or '').upper()}"
            if name not in analysis.sections:
                analysis.sections.append(name)
    return analysis


# ==============================================================================================================
# Retrievers



class SubsetVectorRetriever(BaseRetriever):
    """Dense search through the index's vector store (a LlamaIndex VectorStoreQuery), restricted exactly to a
    subset of rows when filters apply: the query names the subset's chunks, and the store searches only their
    vectors, so k hits come back whenever the subset holds k chunks."""

    def __init__(self, index, embed_model, top_k: int, subset: np.ndarray | None):
        super().__init__()
        self._index, self._embed, self._k, self._subset = index, embed_model, top_k, subset

    def _retrieve(self, query_bundle: QueryBundle):
        if len(self._index) == 0 or (self._subset is not None and len(self._subset) == 0):
            return []
        query = VectorStoreQuery(
            query_embedding=query_bundle.embedding or _embed_query(self._embed, query_bundle.query_str),
            similarity_top_k=self._k,
            node_ids=None if self._subset is None else self._index.node_ids(self._subset),
        )
        found = self._index.vector_store.query(query)
        return [NodeWithScore(node=node, score=score) for node, score in zip(found.nodes, found.similarities)]


def _embed_query(embed_model, text: str):
    return _cached_query_embedding(id(embed_model), text, embed_model)


_QUERY_CACHE: dict[tuple[int, str], list[float]] = {}


def _cached_query_embedding(model_id: int, text: str, embed_model):
    key = (model_id, text)
    if key not in _QUERY_CACHE:
        if len(_QUERY_CACHE) > 512:
            _QUERY_CACHE.clear()
        _QUERY_CACHE[key] = embed_model.get_query_embedding(text)
    return _QUERY_CACHE[key]


def _keyword_retriever(index, top_k: int, subset: np.ndarray | None):
    class SubsetBM25Retriever(BM25Retriever):
        """BM25 (bm25s) with a per-query mask, mapping hits back to the index's own nodes. Chunks outside the
        subset, or with no query term at all (score 0), are not returned."""

        def _retrieve(self, query_bundle: QueryBundle):
            tokens = bm25s.tokenize(
                query_bundle.query_str, stemmer=self.stemmer, token_pattern=self.token_pattern, show_progress=False
            )
            if not tokens.vocab:
                return []
            mask = None
            if subset is not None:
                mask = np.zeros(len(index), dtype="float32")
                mask[subset] = 1.0
            k = min(self.similarity_top_k, len(index) if subset is None else len(subset))
            ids, scores = self.bm25.retrieve(tokens, k=k, weight_mask=mask, show_progress=False, n_threads=1)
            return [
                NodeWithScore(node=index.nodes[int(i)], score=float(s))
                for i, s in zip(ids[0], scores[0])
                if s > 0
            ]

    if index.bm25 is None or (subset is not None and len(subset) == 0):
        return None
    return SubsetBM25Retriever(existing_bm25=index.bm25, similarity_top_k=top_k, stemmer=keyword_stemmer())


# ==============================================================================================================
# The engine's retrieval entry point


class Retriever:
    """Retrieval over one loaded index. Cheap per query; hold one per loaded index generation."""

    def __init__(self, index, embed_model, *, fusion: str = "reciprocal_rerank", weights=None):
        self.index = index
        self.embed_model = embed_model
        self.fusion = fusion
        self.weights = weights
        self.catalog = Catalog.build(list(index.filings.values()), index.nodes)
        self.indexed_sections = set(index.columns["section"]) | set(index.columns["merged_section"])
        self._signatures: dict[str, frozenset[str]] = {}  # chunk id -> words and figures, for drop_repeats

    def retrieve(
        self,
        question: str,
        *,
        mode: str = "hybrid",
        top_k: int = 8,
        filters: Filters | None = None,
        use_analysis: bool = True,
        llm=None,
        generated_queries: int = 0,
    ) -> RetrievalResult:
        """`llm` and `generated_queries` > 0: the LLM writes that many search queries once per question, and every
        list below fuses them with the question (QueryFusionRetriever, num_queries = 1 + generated). Without an
        LLM, or when it fails, the question alone is searched and a warning says why."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        t0 = time.perf_counter()
        extra, warnings = [], []
        if generated_queries > 0 and llm is not None and len(self.index):
            try:
                extra = generate_queries(llm, question, generated_queries)
            except Exception as exc:  # noqa: BLE001 - the question alone is still searched
                warnings.append(f"The LLM did not write search queries ({type(exc).__name__}: {exc}); "
                                f"the question alone was searched.")
        elif generated_queries > 0:
            warnings.append("Query generation needs Ollama, which is not available; the question alone was searched.")
        analysis = analyze(question, self.catalog) if use_analysis else QuestionPlan()
        applied = self._effective_filters(analysis, filters or Filters())
        groups = self._groups(applied)
        # Dense search embeds the question without the words that became filters; keyword search keeps them,
        # since filings print company names and dates in the very sentences that answer.
        bundle = QueryBundle(question)
        if mode != "keyword" and len(self.index):
            bundle.embedding = _embed_query(self.embed_model, search_text(question, analysis, applied))
        lists, statement_lists = [], []
        depth = top_k * 2  # room for the repeats that drop_repeats takes out
        for group in groups:
            subset = self.index.subset(
                tickers=group.tickers, fiscal_years=group.fiscal_years, forms=group.forms, sections=group.sections
            )
            lists.append(drop_repeats(self._search(bundle, mode, depth, subset, extra), top_k, self._signatures))
            if analysis.statements and group.tickers:  # one company's statements, not every company's
                pages = self.index.subset(
                    tickers=group.tickers, fiscal_years=group.fiscal_years, forms=group.forms,
                    statements=analysis.statements,
                )
                if pages is not None and len(pages):
                    statement_lists.append(
                        drop_repeats(self._search(bundle, mode, depth, pages, extra), top_k, self._signatures))
        nodes = _round_robin(lists, top_k)  # interleaved: each group gets its share, and k come back in all
        if statement_lists:
            # The statement the question names first, alternating with the general results.
            nodes = _round_robin([_round_robin(statement_lists, top_k), nodes], top_k)
        return RetrievalResult(
            query=question, mode=mode, nodes=nodes, plan=analysis, filters=applied,
            retrieval_ms=(time.perf_counter() - t0) * 1000, generated_queries=extra, warnings=warnings,
        )

    def _effective_filters(self, analysis: QuestionPlan, user: Filters) -> Filters:
        """The user's own filters win, dimension by dimension; detected ones fill the rest."""
        tickers = user.tickers or analysis.tickers
        years = user.fiscal_years or analysis.fiscal_years
        if years and not user.fiscal_years:
            years = self._indexed_years(tickers, years)
        sections = user.sections or [s for s in analysis.sections if s in self.indexed_sections]
        return Filters(
            tickers=[t.upper() for t in tickers], fiscal_years=[int(y) for y in years],
            forms=user.forms or analysis.forms, sections=sections,
        )

    def _indexed_years(self, tickers: list[str], years: list[int]) -> list[int]:
        """A year with no filing of its own is read from the next year's filing, which reports it as the
        prior-year comparative; a year no filing covers is dropped rather than filtering everything out."""
        have = set()
        for ticker in tickers or list(self.catalog.years_by_ticker):
            have.update(self.catalog.years_by_ticker.get(ticker, []))
        out = []
        for year in years:
            pick = year if year in have else (year + 1 if year + 1 in have else None)
            if pick is not None and pick not in out:
                out.append(pick)
        return out

    def _groups(self, applied: Filters) -> list[Filters]:
        """One retrieval per (company, year) when the question spans several, so each gets its share. Only
        pairs the index holds: 'Adobe (fiscal 2024) or Salesforce (fiscal 2025)' is two retrievals, not four."""
        tickers = applied.tickers or [None]
        years = applied.fiscal_years or [None]
        if len(tickers) * len(years) <= 1:
            return [applied]
        groups = []
        for t in tickers:
            have = set(self.catalog.years_by_ticker.get(t, [])) if t else None
            own = [y for y in years if y is None or have is None or y in have]
            for y in own or [None]:  # a company none of whose years is indexed: search all its filings
                groups.append(Filters(tickers=[t] if t else [], fiscal_years=[y] if y else [],
                                      forms=applied.forms, sections=applied.sections))
        return groups

    def _search(self, bundle: QueryBundle, mode: str, k: int, subset, extra_queries: list[str]):
        from llama_index.core.llms import MockLLM

        depth = max(k * 3, 20)  # fusion needs deeper lists than it returns
        fused = mode == "hybrid" or bool(extra_queries)
        dense = SubsetVectorRetriever(self.index, self.embed_model, depth if fused else k, subset)
        keyword = _keyword_retriever(self.index, depth if fused else k, subset)
        retrievers = {"dense": [dense], "keyword": [keyword] if keyword else [],
                      "hybrid": [dense] + ([keyword] if keyword else [])}[mode]
        if not retrievers:
            return []
        if not fused:
            return retrievers[0].retrieve(bundle)
        fusion = _FusionOverQueries(
            retrievers,
            extra_queries=extra_queries,
            llm=MockLLM(),  # never called: the queries were written once per question, before any search
            mode=self.fusion if mode == "hybrid" else "reciprocal_rerank",
            similarity_top_k=k,
            num_queries=1 + len(extra_queries),
            use_async=False,
            retriever_weights=self.weights if self.weights and len(retrievers) == 2 else None,
        )
        return fusion.retrieve(bundle)


class _FusionOverQueries(QueryFusionRetriever):
    """QueryFusionRetriever over the question plus queries generated beforehand: a question spanning several
    companies or years searches several lists, and the LLM is asked once, not once per list."""

    def __init__(self, *args, extra_queries: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self._extra_queries = list(extra_queries)

    def _get_queries(self, original_query: str) -> list[QueryBundle]:
        return [QueryBundle(q) for q in self._extra_queries]


QUERY_PROMPT = (
    "You help an analyst search SEC 10-K and 10-Q filings. Write {n} different search queries that would find the "
    "passages answering the question below, each worded the way a filing would word it (for example 'net sales' "
    "rather than 'revenue', 'we manufacture' rather than 'they make'). Keep company names and years. One query per "
    "line, no numbering, no other text.\n\nQuestion: {question}\nQueries:\n"
)
_QUERY_LINE_JUNK = re.compile(r"^\s*(?:[-*•]|\d+[.)]|q\d+:|query\s*\d*:)\s*", re.I)


def generate_queries(llm, question: str, n: int) -> list[str]:
    """Up to n search queries from the LLM, cleaned: no reasoning text, numbering, quotes, repeats of the question
    or of each other, and nothing longer than a question would be."""
    response = llm.complete(QUERY_PROMPT.format(n=n, question=question))
    text = re.sub(r"<think>.*?(?:</think>|$)", "", str(getattr(response, "text", response) or ""), flags=re.S | re.I)
    out: list[str] = []
    seen = {question.strip().lower()}
    for line in text.replace("`", "").splitlines():
        query = _QUERY_LINE_JUNK.sub("", line).strip().strip("\"'“”").strip()
        if len(query) < 4 or len(query) > 300 or query.lower() in seen or query.endswith(":"):
            continue
        seen.add(query.lower())
        out.append(query)
        if len(out) == n:
            break
    return out


_SIGNATURE_TOKEN = re.compile(r"[a-z]+|\d[\d,.]*\d|\d")
REPEAT_SIMILARITY = 0.9  # share of distinct words and figures two chunks must have in common to be one passage


def _signature(node) -> frozenset[str]:
    """A chunk's words and figures, without its header line (which differs between filings)."""
    return frozenset(_SIGNATURE_TOKEN.findall(node.text.split("\n", 1)[-1].lower()))


def drop_repeats(results: list, k: int, signatures_by_id: dict | None = None) -> list:
    """One place per passage. Filings repeat themselves: the same paragraph stands in every year's 10-K, and in
    both MD&A and the notes of one. Copies after the first are dropped (a table whose figures changed is not a
    copy: its figures are part of what is compared); of one company's copies in different fiscal years, the
    latest filing's copy takes the best copy's place, since that is the company's current wording."""
    kept: list = []
    signatures: list[frozenset[str]] = []
    cache = signatures_by_id if signatures_by_id is not None else {}
    for result in results:
        signature = cache.get(result.node.node_id)
        if signature is None:
            if len(cache) > 4096:  # bounded: a few thousand recent chunks, not the whole index
                cache.clear()
            signature = cache[result.node.node_id] = _signature(result.node)
        twin = None
        for i, other in enumerate(signatures):
            union = len(signature | other)
            if union and len(signature & other) / union >= REPEAT_SIMILARITY:
                twin = i
                break
        if twin is None:
            kept.append(result)
            signatures.append(signature)
            continue
        held = kept[twin].node.metadata
        meta = result.node.metadata
        if (meta.get("ticker") == held.get("ticker")
                and int(meta.get("fiscal_year") or 0) > int(held.get("fiscal_year") or 0)):
            kept[twin] = NodeWithScore(node=result.node, score=kept[twin].score)
            signatures[twin] = signature
    return kept[:k]


def _round_robin(lists: list[list], k: int) -> list:
    out, seen = [], set()
    for rank in range(max((len(x) for x in lists), default=0)):
        for results in lists:
            if rank < len(results) and results[rank].node.node_id not in seen:
                seen.add(results[rank].node.node_id)
                out.append(results[rank])
    return out[:k]
