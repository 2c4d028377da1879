"""Retrieval over the index for a question plan: dense (the FAISS vector store), keyword (BM25) or both fused."""

from __future__ import annotations

import re
import time
import weakref
from dataclasses import replace

import numpy as np
from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import BaseRetriever, QueryFusionRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import VectorStoreQuery

from .catalog import Catalog
from .intent import read_intent
from .item_topics import BUSINESS_WORDS
from .ordering import after_first, drop_repeats, round_robin
from .phrasing import PhraseList
from .question import plan_question
from .ranking import LIST_HEAD, NO_CONTEXT, Candidate, RankContext, Ranking, default_ranking, rank_context
from .recurring import RecurringSentences
from .schema import MODES, Filters, QuestionPlan, RetrievalResult
from .second_look import SentenceVectors
from .words import COUNT_AFTER_NOUN_LINK, STOP_WORDS, spelled_out, stem

# ==============================================================================================================
# The search text


def search_text(question: str, plan: QuestionPlan, applied: Filters) -> str:
    """The question without the words that became filters ("Acme's", "fiscal 2025", "10-K"): every chunk
    of the filtered filings carries them in its header, so they only blur what the rest of the question asks."""
    values = {"ticker": set(applied.tickers), "fiscal_year": set(applied.fiscal_years), "form": set(applied.forms)}
    if plan.question != question:
        return question
    # A follow-up asked again with an earlier turn's question (rag.followup): the company or year it replaced is
    # left out as well.
    text = plan.question_without(
        lambda dimension, value: value in values.get(dimension, ()) or dimension in plan.replaced)
    text = re.sub(r"(?<!\w)(?:'s|’s|')(?!\w)", " ", text)  # the possessive left by a removed name
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(re.findall(r"\w{3,}", text)) >= 2 else question


# Questions about the documents a filing lists as exhibits (agreements, charters, indentures, certifications), and
# the Items that hold the exhibit index: only these search it.
_EXHIBIT_QUESTION = PhraseList("exhibit_question")
_EXHIBIT_ITEMS = ("Item 15", "Item 16", "Part II Item 6", "Signatures")
_STANDARDS_QUESTION = PhraseList("standards_question")


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
            **self._index.restriction(self._subset),
        )
        found = self._index.vector_store.query(query)
        return [NodeWithScore(node=node, score=score) for node, score in zip(found.nodes, found.similarities)]


# Query embeddings by model: id(model) -> (a weak reference to that model, its embeddings by query text). An id is
# reused once its object is gone, so an entry serves only the very model it was made by (a model swapped in the
# settings must never get another model's vectors).
_QUERY_CACHE: dict[int, tuple[weakref.ref, dict[str, list[float]]]] = {}
_QUERIES_PER_MODEL = 512
# A figure question that names no company is asked of each indexed company when there are at most this many (a
# short list of figures, each cited); with more, the answer asks which one is meant.
EACH_COMPANY_MAX = 4


def _embed_query(embed_model, text: str):
    held = _QUERY_CACHE.get(id(embed_model))
    if held is None or held[0]() is not embed_model:
        for key in [k for k, (ref, _cache) in _QUERY_CACHE.items() if ref() is None]:
            del _QUERY_CACHE[key]
        held = _QUERY_CACHE[id(embed_model)] = (weakref.ref(embed_model), {})
    cache = held[1]
    if text not in cache:
        if len(cache) >= _QUERIES_PER_MODEL:
            cache.clear()
        cache[text] = embed_model.get_query_embedding(text)
    return cache[text]


def with_spelled_out(query: str) -> str:
    """The query with the words its short forms stand for added ("DOJ" and "department of justice"): filings spell
    them out, and keyword search matches words, not meanings."""
    return " ".join([query, *spelled_out(query)])


class SubsetKeywordRetriever(BaseRetriever):
    """Keyword search through the index (BM25 in the embedded store, full-text search in the served one), restricted
    to a subset of rows; chunks with no query word are not returned."""

    def __init__(self, index, top_k: int, subset: np.ndarray | None):
        super().__init__()
        self._index, self._k, self._subset = index, top_k, subset

    def _retrieve(self, query_bundle: QueryBundle):
        return self._index.keyword_search(with_spelled_out(query_bundle.query_str), self._k, self._subset)


def _keyword_retriever(index, top_k: int, subset: np.ndarray | None):
    if not len(index) or (subset is not None and len(subset) == 0):
        return None
    return SubsetKeywordRetriever(index, top_k, subset)


# ==============================================================================================================
# The engine's retrieval entry point


class Retriever:
    """Retrieval over one loaded index. Cheap per query; hold one per loaded index generation."""

    def __init__(self, index, embed_model, *, fusion: str = "reciprocal_rerank", weights=None, reranker=None,
                 ranking: Ranking | None = None):
        self.index = index
        self.reranker = reranker  # rag.rerank.Reranker, or None
        self.ranking = ranking or default_ranking()  # the order of each search's passages
        self.recorder = None  # called with each search's candidates and features (rag.ranking_fit)
        self.embed_model = embed_model
        self.fusion = fusion
        self.weights = weights
        self.catalog = Catalog.build(list(index.filings.values()), uses=index.word_uses())
        self.indexed_sections = set(index.columns["section"]) | set(index.columns["merged_section"])
        self._signatures: dict[str, frozenset[str]] = {}  # chunk id -> words and figures, for drop_repeats
        self._sentence_vectors = SentenceVectors(embed_model)
        self.recurring = RecurringSentences(index)  # boilerplate: sentences other filers print too

    def plan(self, question: str) -> QuestionPlan:
        """The question read once: its plan, with the intent the model reads in it."""
        return read_intent(plan_question(question, self.catalog), self.embed_model)

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
        plan: QuestionPlan | None = None,
    ) -> RetrievalResult:
        """`llm` and `generated_queries` > 0: the LLM writes that many search queries once per question, and every
        list below fuses them with the question (QueryFusionRetriever, num_queries = 1 + generated). Without an
        LLM, or when it fails, the question alone is searched and a warning says why. `plan`: the question's plan
        read already (a follow-up's, merged with its conversation), whose question is the one searched."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        t0 = time.perf_counter()
        question = plan.question if plan is not None else question
        extra, warnings = self._generated_queries(llm, question, generated_queries)
        if plan is None:
            plan = self.plan(question) if use_analysis else QuestionPlan(question=question)
        # A compound question's later questions are searched beside it, fused as generated queries are.
        generated, extra = extra, extra + [q for q in plan.follow_ups if q not in extra]
        named_by = None if (filters and filters.tickers) or plan.tickers else self._company_by_name(plan)
        if named_by is None and not plan.tickers and not (filters and filters.tickers):
            self._no_company_named(plan, filters or Filters())
            if plan.every_company:
                what = f"{plan.whole_item} is outlined" if plan.whole_item else "figure is given"
                warnings.append(f"No company is named: each indexed company's {what} ({', '.join(plan.tickers)}).")
        applied = self._effective_filters(plan, filters or Filters(), [named_by[0]] if named_by else [])
        if named_by:
            warnings.append(f"No company is named; only {named_by[0]}'s filings mention \"{named_by[1]}\", so those "
                            "were searched.")
        groups, unavailable = self._groups(applied, plan, filters or Filters())
        # Dense search embeds the question without the words that became filters; keyword search keeps them,
        # since filings print company names and dates in the very sentences that answer.
        bundle = QueryBundle(question)
        if mode != "keyword" and len(self.index):
            bundle.embedding = _embed_query(self.embed_model, search_text(question, plan, applied))
        lists, statement_lists, item_lists = [], [], []
        depth = top_k * 2  # room for the repeats that drop_repeats takes out
        # An exhibit index answers only a question about the documents filed (see is_exhibit_list).
        exhibits_asked = bool(_EXHIBIT_QUESTION.search(question.lower())) or any(
            s in _EXHIBIT_ITEMS for s in applied.sections)
        standards_last = not _STANDARDS_QUESTION.search(question.lower())
        for group in groups:
            subset = self.index.subset(
                tickers=group.tickers, fiscal_years=group.fiscal_years, forms=group.forms, sections=group.sections,
                fiscal_periods=group.fiscal_periods, without_exhibit_lists=not exhibits_asked,
            )
            context = rank_context(plan, group, standards_asked=not standards_last)
            lists.append(drop_repeats(self._search(bundle, mode, depth, subset, extra, context), top_k,
                                      self._signatures))
            if plan.statements and group.tickers:  # one company's statements, not every company's
                pages = self.index.subset(
                    tickers=group.tickers, fiscal_years=group.fiscal_years, forms=group.forms,
                    fiscal_periods=group.fiscal_periods, statements=plan.statements,
                )
                if pages is not None and len(pages):
                    statement_lists.append(
                        drop_repeats(self._search(bundle, mode, depth, pages, extra, context), top_k, self._signatures))
            item_lists.append(self._named_passages(plan, subset, bundle, mode, depth, extra, context)
                              + self._part_rows(plan, subset, bundle, mode, depth, extra, context)
                              + self._item_passage(plan, group, bundle, mode, depth, extra, context)
                              + self._item_outline(plan, group))
        item_lists = [found for found in item_lists if found]
        nodes = round_robin(lists, top_k)  # interleaved: each group gets its share, and k come back in all
        if item_lists:
            # Each company's best passage of the Items its question's topic points to, right after the first result.
            nodes = after_first(nodes, round_robin(item_lists, top_k), top_k)
        if statement_lists:
            # The statement the question names first, alternating with the general results.
            nodes = round_robin([round_robin(statement_lists, top_k), nodes], top_k)
        nodes = self._with_continuations(nodes, top_k)
        if nodes:
            warnings += _period_warnings(unavailable)
        return RetrievalResult(
            query=question, mode=mode, nodes=nodes, plan=plan, filters=applied,
            retrieval_ms=(time.perf_counter() - t0) * 1000, generated_queries=generated, warnings=warnings,
            unavailable=unavailable,
        )

    def _with_continuations(self, nodes: list, top_k: int) -> list:
        """A leading passage that ends by leading in to what follows (its text ends in a colon: "we spent $40 million
        on our plants, as follows:", "the following table shows:", invented examples) was cut where its point begins:
        the next chunk of its filing follows it."""
        out, held = [], {r.node.node_id for r in nodes}
        for place, result in enumerate(nodes):
            out.append(result)
            if place >= CONTINUED_PLACES or not result.node.text.rstrip().endswith(":"):
                continue
            following = self.index.following_chunk(result.node.node_id)
            if following is not None and following.node_id not in held and int(
                    following.metadata.get("char_start") or 0) > int(result.node.metadata.get("char_start") or 0):
                out.append(NodeWithScore(node=following, score=result.score))
                held.add(following.node_id)
        return out[:top_k]

    def _generated_queries(self, llm, question: str, n: int) -> tuple[list[str], list[str]]:
        """The search queries the LLM writes for the question, and the warnings when it could not."""
        if n > 0 and llm is not None and len(self.index):
            try:
                return generate_queries(llm, question, n), []
            except Exception as exc:  # noqa: BLE001 - the question alone is still searched
                return [], [f"The LLM did not write search queries ({type(exc).__name__}: {exc}); "
                            f"the question alone was searched."]
        if n > 0:
            return [], ["Query generation needs Ollama, which is not available; the question alone was searched."]
        return [], []

    def _named_passages(self, plan: QuestionPlan, subset, bundle: QueryBundle, mode: str, depth: int,
                        extra: list[str], context: RankContext = NO_CONTEXT) -> list:
        """For each name the question writes in several common words ("Future Labs", "Acme Direct": a product,
        a program, a business bought), the group's best passages that hold the name as written. Keyword search
        weighs each of those words as common and dense search blurs them, so the passages about the name can rank
        below many that use its words apart."""
        found = []
        for phrase in plan.name_phrases[:2]:
            rows = self.index.rows_with_phrase(phrase, subset)
            if len(rows):
                found.extend(self._search(bundle, mode, depth, rows, extra, context)[:NAMED_PASSAGES])
        return found

    def _part_rows(self, plan: QuestionPlan, subset, bundle: QueryBundle, mode: str, depth: int,
                   extra: list[str], context: RankContext = NO_CONTEXT) -> list:
        """For a figure asked of a part of the company ("cons prod rev", "enterprise software licensing revenue"), the
        group's best passage holding a table row labelled with the part's words (short forms spelled out): a
        revenue-by-offering table prints the part's line among many passages that use its words in prose."""
        if plan.narrative:
            return []  # why or how a part's figure moved is told in prose, not in its row
        found = []
        for mention in plan.metrics:
            if mention.vetoed or not mention.before or mention.after:
                continue
            words = [w for word in mention.before for w in (spelled_out(word) or [word])[0].split()]
            # A part inside a part ("enterprise software licensing") may be printed under its group's heading by its own
            # last words ("Licensing" under "Enterprise Software"): the longest run of the words that labels a row.
            for start in range(len(words)):
                rows = self.index.rows_with_row_label(words[start:], subset)
                if len(rows):
                    found.extend(self._search(bundle, mode, depth, rows, extra, context)[:1])
                    break
        return found[:NAMED_PASSAGES]

    def _item_passage(self, plan: QuestionPlan, group: Filters, bundle: QueryBundle, mode: str, depth: int,
                      extra: list[str], context: RankContext = NO_CONTEXT) -> list:
        """The group's best passage (a list of one, or none) of the 10-K Items the question's topic points to
        without naming them (plan.topic_sections), searched with the regulation's words for what they disclose."""
        topic_items = [s for s in plan.topic_sections if s in self.indexed_sections]
        if not topic_items or group.sections or (group.forms and "10-K" not in group.forms):
            return []
        items = self.index.subset(
            tickers=group.tickers, fiscal_years=group.fiscal_years, forms=group.forms,
            fiscal_periods=group.fiscal_periods, sections=topic_items, without_exhibit_lists=True,
        )
        if items is None or not len(items):
            return []
        # The subset is already one company's Item of one year: its name and year in the query would only favour
        # passages that repeat them over the one holding the disclosure.
        topic = plan.question_without(lambda dimension, _v: dimension in ("ticker", "fiscal_year"))
        by_rule = QueryBundle(" ".join([topic] + plan.topic_words))
        by_rule.embedding = bundle.embedding
        found = drop_repeats(self._search(by_rule, mode, depth, items, extra, context), depth, self._signatures)
        if not group.fiscal_years and found:
            # No year named: the company as it is now, so the best-matching company's latest filing comes first.
            ticker = found[0].node.metadata.get("ticker")
            found = sorted(found, key=lambda r: (r.node.metadata.get("ticker") != ticker,
                                                 -int(r.node.metadata.get("fiscal_year") or 0)))
        if mode != "keyword" and not plan.asks_figure:
            # The Item's best few passages read again sentence by sentence: Item 1 states what a question asks in
            # one sentence among others on neighbouring matters (rag.second_look). Not for a figure, which a table
            # row states without a sentence around it.
            found = self._sentence_vectors.by_best_sentence(found, bundle.embedding)
        # A figure asked per item ("revenue per employee") is divided by the count of the item the text states.
        counted = plan.counted or plan.per_item or plan.number_of
        best = _counting_first(found, counted, plan.topic_words)[:1]
        if counted:
            # An Item may count the thing more than once (holders of each class of stock, employees by region or
            # by business): the next passage that counts it too, so the one the question means is among them.
            # The question's own words, not the Item's (a repurchase plan's shares are no holders of record).
            counting = _counting(found, counted, []) - {r.node.node_id for r in best}
            best += [r for r in found if r.node.node_id in counting][:1]
        if BUSINESS_WORDS in plan.topic_words:
            # What the company is and does: Item 1 opens with that description (Regulation S-K 101(c)), in the
            # filing's own words for its business, which seldom share the question's ("what kind of company").
            held = {r.node.node_id for r in best}
            best += [r for r in self._opening_passages(items, "Item 1") if r.node.node_id not in held]
        return best

    def _item_outline(self, plan: QuestionPlan, group: Filters) -> list:
        """A question about one Item as a whole (plan.whole_item, "What are the main risk factors?"): the group's
        company's opening passages of that Item, where its outline starts (a summary of the risk factors, the first
        headlines). Ranked by the question, the passages that repeat the Item's title win, and those are its
        preamble about itself. Item 1's opening, the description of the business, joins by _item_passage."""
        if not plan.whole_item or len(group.tickers) != 1 or BUSINESS_WORDS in plan.topic_words:
            return []
        rows = self.index.subset(tickers=group.tickers, fiscal_years=group.fiscal_years, forms=group.forms,
                                 fiscal_periods=group.fiscal_periods, sections=[plan.whole_item])
        return [] if rows is None else self._opening_passages(rows, plan.whole_item, OUTLINE_PASSAGES)

    def _opening_passages(self, rows, section: str, count: int = 1) -> list:
        """The first `count` chunks of `section` in the latest filing among `rows`, and the next one too when the
        first is a short preamble (where the company was incorporated, what "we" and "our" mean, what the Item is
        about: its substance follows it); none when the rows hold none of the section, or span several companies
        (whose would it be?)."""
        columns = self.index.columns
        rows = rows[columns["section"][rows] == section]
        if not len(rows) or len(set(columns["ticker"][rows])) > 1:
            return []
        latest = rows[columns["fiscal_year"][rows] == columns["fiscal_year"][rows].max()]
        ordered = sorted(self.index.nodes_at(latest),
                         key=lambda n: (n.metadata.get("doc_id", ""), int(n.metadata.get("char_start") or 0)))
        body_words = len(ordered[0].text.split("\n", 1)[-1].split())
        opening = ordered[:count + 1] if body_words < PREAMBLE_WORDS else ordered[:count]
        return [NodeWithScore(node=n, score=0.0) for n in opening]

    def _effective_filters(self, plan: QuestionPlan, user: Filters, named: list[str]) -> Filters:
        """The user's own filters win, dimension by dimension; detected ones fill the rest (`named`: the company
        a name the question writes points to, see _company_by_name)."""
        tickers = user.tickers or plan.tickers or named
        years = user.fiscal_years or plan.document_years or plan.fiscal_years
        if years and not user.fiscal_years:
            years = self._indexed_years(tickers, years)
        sections = user.sections or [s for s in plan.sections if s in self.indexed_sections]
        periods = user.fiscal_periods or [p for p in dict.fromkeys(a.fiscal_period for a in plan.periods)
                                          if p in self.catalog.indexed_periods]
        return Filters(
            tickers=[t.upper() for t in tickers], fiscal_years=[int(y) for y in years],
            forms=user.forms or plan.forms, sections=sections, fiscal_periods=periods,
        )

    def _no_company_named(self, plan: QuestionPlan, user: Filters) -> None:
        """A figure question that names no company, with several indexed, is no guess at one, nor is a question about
        one Item as a whole (plan.whole_item: each company's risk factors are its own): each company is asked
        when they are at most EACH_COMPANY_MAX, else the plan lists them to choose from (plan.every_company,
        plan.which_company). A ranking or a combined figure is asked across all of them already; a full date may
        name the one filing whose cover or period it is, and a name the plan reads as no company (a segment, a
        brand) the one company whose filings print it, both of which the facts layer and the search resolve."""
        # The companies within the user's own year filter, when one is set.
        companies = sorted(t for t, years in self.catalog.years_by_ticker.items()
                           if not user.fiscal_years or set(years) & set(user.fiscal_years))
        calc = plan.calculation
        # A figure, or one Item as a whole ("What are the main risk factors?"): each company has its own.
        asks_each = bool(plan.whole_item) or (plan.asks_figure and not plan.prose_intent)
        if (len(companies) < 2 or not asks_each or plan.unknown_companies
                or plan.ambiguous_companies or calc.ranks or calc.total or plan.dates or plan.unread_names
                or plan.name_phrases):
            return
        if len(companies) <= EACH_COMPANY_MAX:
            plan.tickers, plan.every_company = companies, True
        else:
            names = {}
            for f in self.catalog.filings:  # the name of each company's latest filing
                if f.get("ticker") in self.catalog.years_by_ticker:
                    names[f["ticker"]] = max(names.get(f["ticker"], ("", "")), (str(f.get("period_end") or ""),
                                                                                 f.get("company") or f["ticker"]))
            plan.which_company = {t: names.get(t, ("", t))[1] for t in companies}

    def _company_by_name(self, plan: QuestionPlan) -> tuple[str, str] | None:
        """(ticker, name) for the one company whose filings print a name the question writes in several words
        ("Tell me about the Future Labs deal": only one company's filings mention it), for a question that names
        no company; else None. The name's words are common ones, so a search over every company ranks other
        filers' passages that use them apart."""
        for phrase in plan.name_phrases:
            rows = self.index.rows_with_phrase(phrase)
            owners = set(self.index.columns["ticker"][rows]) if len(rows) else set()
            if len(owners) == 1:
                return str(owners.pop()), phrase
        return None

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

    def _groups(self, applied: Filters, plan: QuestionPlan, user: Filters) -> tuple[list[Filters], list[str]]:
        """One retrieval per (company, year) when the question spans several, so each gets its share, and per
        (company, fiscal quarter) when it asks for quarters. Only pairs the index holds: 'Acme (fiscal 2024) or
        Globex (fiscal 2025)' is two retrievals, not four. Also returns the periods asked for that no filing
        covers; when none of those asked is covered there is no group at all (another period's figures would be
        a wrong answer, not a nearby one)."""
        if not user.fiscal_years and not user.fiscal_periods and (plan.periods or plan.latest_quarters):
            quarters, unavailable = self._quarter_groups(applied, plan)
            if quarters or (unavailable and not plan.narrative):
                return quarters, unavailable
            if unavailable:
                # A question in prose about a quarter no 10-Q covers ("what weighed on margins in the second
                # quarter of fiscal 2025") is read from that fiscal year's filings, whose annual report tells the
                # year's quarters in its MD&A and risk factors; a figure for the quarter never is (the facts layer
                # leaves prose alone). With no year named ("why is the first quarter seasonally slow"), the
                # company's latest annual report speaks for it. The periods stay listed as not covered.
                if applied.fiscal_years:
                    return self._year_groups(applied, plan, user), unavailable
                return self._latest_annual_reports(applied), unavailable
        later = [] if user.fiscal_years else self._years_after_index(applied.tickers, plan)
        if later and not applied.fiscal_years:
            # Every year asked comes after the latest report indexed ("revenue for fiscal 2027"): no filing speaks
            # for it, and another year's figures would be a wrong answer. A question in prose ("what does it expect
            # for fiscal 2027") is still read from the latest reports, which tell what the company expects.
            return ([] if not plan.narrative else self._year_groups(applied, plan, user)), later
        # A year before every indexed report's reach is listed too, though the search goes on: the reports' own
        # passages may still speak of it, and when none does the answer says no indexed report covers it.
        earlier = [] if user.fiscal_years else self._years_before_index(applied.tickers, plan)
        return self._year_groups(applied, plan, user), later + earlier

    def _years_before_index(self, tickers: list[str], plan: QuestionPlan) -> list[str]:
        """The fiscal years asked that come before what any indexed filing of the companies named reports, as
        "ACME FY2019": an annual report's statements cover its own fiscal year and the two before it at most
        (Regulation S-X Rules 3-02 and 3-04), so a FY2024 10-K reports nothing of FY2019."""
        out = []
        for ticker in tickers:
            held = self.catalog.years_by_ticker.get(ticker, [])
            out += [f"{ticker} FY{year}" for year in plan.fiscal_years
                    if held and year < min(held) - _YEARS_A_REPORT_COVERS + 1]
        return out

    def _years_after_index(self, tickers: list[str], plan: QuestionPlan) -> list[str]:
        """The fiscal years asked that come after every indexed filing of the companies named (of any company when
        none is named), as "ACME FY2027". A year written bare may be a calendar year that the latest annual report,
        filed in the next one, still speaks of ("holders of record in early 2025" in a FY2024 10-K): such a year
        counts only from the one after that."""
        out = []
        for ticker in tickers or [None]:
            held = self.catalog.years_by_ticker.get(ticker, []) if ticker else [
                y for ys in self.catalog.years_by_ticker.values() for y in ys]
            # How many years after the latest filing a year asked must come: 0 written as fiscal, 1 written bare.
            out += [f"{ticker} FY{year}" if ticker else f"FY{year}" for year in plan.fiscal_years
                    if held and year > max(held) + (0 if year in plan.fiscal_written else 1)]
        return out

    def _year_groups(self, applied: Filters, plan: QuestionPlan, user: Filters) -> list[Filters]:
        """One group per (company, fiscal year) the question spans, each the annual report when it asks for a
        whole year."""
        tickers = applied.tickers or [None]
        years = applied.fiscal_years or [None]
        annual = plan.annual and not user.forms and not user.fiscal_periods
        if len(tickers) * len(years) <= 1:
            return [self._annual_report(applied) if annual else applied]
        groups = []
        for t in tickers:
            have = set(self.catalog.years_by_ticker.get(t, [])) if t else None
            own = [y for y in years if y is None or have is None or y in have]
            for y in own or [None]:  # a company none of whose years is indexed: search all its filings
                group = replace(applied, tickers=[t] if t else [], fiscal_years=[y] if y else [])
                groups.append(self._annual_report(group) if annual else group)
        return groups

    def _latest_annual_reports(self, applied: Filters) -> list[Filters]:
        """Each company's latest annual report, one group per company named (all of the index's filings when none
        is named or a company has no annual report indexed)."""
        groups = []
        for ticker in applied.tickers:
            years = [fy for _end, fy, fp in self.catalog.periods_by_ticker.get(ticker, []) if fp == "FY"]
            groups.append(self._annual_report(replace(applied, tickers=[ticker], fiscal_years=years[-1:])))
        return groups or [applied]

    def _annual_report(self, group: Filters) -> Filters:
        """A fiscal year asked as a whole is read from the annual report when the index holds one for every company
        and year of the group (a year still in progress has only its 10-Qs: those are searched then)."""
        if not group.fiscal_years:
            return group
        tickers = group.tickers or list(self.catalog.periods_by_ticker)
        held = {(t, fy) for t in tickers for _end, fy, fp in self.catalog.periods_by_ticker.get(t, []) if fp == "FY"}
        if group.tickers and all((t, y) in held for t in tickers for y in group.fiscal_years):
            return replace(group, fiscal_periods=["FY"])
        return group

    def _quarter_groups(self, applied: Filters, plan: QuestionPlan) -> tuple[list[Filters], list[str]]:
        """(company, fiscal year, fiscal period) groups for the periods the question names, or for its latest
        quarters; a period without a year reads the company's latest filing of that period. Also the periods
        named for a company that no filing of it covers."""
        groups: list[Filters] = []
        unavailable: list[str] = []
        for t in applied.tickers or list(self.catalog.periods_by_ticker):
            held = self.catalog.periods_by_ticker.get(t, [])  # (period_end, fiscal_year, fiscal_period), oldest first
            if plan.latest_quarters:
                wanted = [(fy, fp) for _end, fy, fp in held[-plan.latest_quarters:]]
            else:
                wanted = []
                for ask in plan.periods:
                    years = [fy for _end, fy, fp in held if fp == ask.fiscal_period
                             and (ask.fiscal_year is None or fy == ask.fiscal_year)]
                    if years:
                        wanted.append((years[-1], ask.fiscal_period))
                        if ask.quarter == 4 and ask.months == 3 and not any(
                                fy == years[-1] and fp == "Q3" for _end, fy, fp in held):
                            # A fourth quarter is filed only inside its fiscal year: without the Q3 10-Q's nine
                            # months to take from the year, no indexed filing gives it alone. The annual report is
                            # still read, as it may tell the quarter in its MD&A.
                            unavailable.append(f"{t} {ask.label()}")
                    elif applied.tickers:
                        unavailable.append(f"{t} {ask.label()}")
            for fy, fp in dict.fromkeys(wanted):
                groups.append(replace(applied, tickers=[t], fiscal_years=[fy], fiscal_periods=[fp]))
        if not groups and not applied.tickers:  # no company named, and no indexed company reported those periods
            unavailable = [ask.label() for ask in plan.periods]
        return groups, unavailable

    def _search(self, bundle: QueryBundle, mode: str, k: int, subset, extra_queries: list[str],
                context: RankContext = NO_CONTEXT):
        depth = max(k * 3, 20)  # fusion needs deeper lists than it returns
        fused = mode == "hybrid" or bool(extra_queries)
        dense = SubsetVectorRetriever(self.index, self.embed_model, depth if fused else k, subset)
        keyword = _keyword_retriever(self.index, depth if fused else k, subset)
        retrievers = {"dense": [dense], "keyword": [keyword] if keyword else [],
                      "hybrid": [dense] + ([keyword] if keyword else [])}[mode]
        if not retrievers:
            return []
        kinds = ["keyword" if r is keyword else "dense" for r in retrievers]
        if not fused:
            found = retrievers[0].retrieve(bundle)
            found = self.reranker.reranked(bundle.query_str, found) if self.reranker else found
            return self._ranked(found, {kinds[0]: [found]}, context)[:k]
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
        # Fusion's first k with each list's best LIST_HEAD beside them: reciprocal rank fusion ranks a passage only
        # one retriever finds (an exact phrase dense search misses) below many both find at middling ranks.
        found = fusion.fused_candidates(fusion.retrieve(bundle), LIST_HEAD)
        if self.reranker:  # over every fused candidate, so a passage fusion ranked low can reach the first k
            found = self.reranker.reranked(bundle.query_str, fusion.fused_candidates(found))
        by_kind: dict[str, list] = {}
        for retriever_at, hits in fusion.lists:
            by_kind.setdefault(kinds[retriever_at], []).append(hits)
        return self._ranked(found, by_kind, context)[:k]

    def _ranked(self, found: list, lists_by_kind: dict[str, list[list]], context: RankContext) -> list:
        """`found` (fusion's order) in the fitted ranking's order. A cross-encoder's order stands as it is: it reads
        the question with each passage, which the ranking's features only approximate, and the weights were fitted
        on fusion's order, not on its."""
        if self.reranker:
            return found
        places: dict[str, dict[str, int]] = {}
        shares: dict[str, dict[str, float]] = {}  # score / the list's first score, best over the kind's lists
        for kind, lists in lists_by_kind.items():
            best, share = places.setdefault(kind, {}), shares.setdefault(kind, {})
            for hits in lists:
                top = max((h.score or 0.0 for h in hits), default=0.0)
                for rank, hit in enumerate(hits):
                    node_id = hit.node.node_id
                    best[node_id] = min(rank, best.get(node_id, rank))
                    if top > 0:
                        share[node_id] = max((hit.score or 0.0) / top, share.get(node_id, 0.0))
        candidates = [Candidate(result=r, fused_rank=rank,
                                dense_rank=places.get("dense", {}).get(r.node.node_id),
                                keyword_rank=places.get("keyword", {}).get(r.node.node_id),
                                dense_share=shares.get("dense", {}).get(r.node.node_id, 0.0),
                                keyword_share=shares.get("keyword", {}).get(r.node.node_id, 0.0))
                      for rank, r in enumerate(found)]
        return self.ranking.ordered(candidates, context, self.recorder)


class _FusionOverQueries(QueryFusionRetriever):
    """QueryFusionRetriever over the question plus queries generated beforehand: a question spanning several
    companies or years searches several lists, and the LLM is asked once, not once per list."""

    def __init__(self, *args, extra_queries: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self._extra_queries = list(extra_queries)
        # Each retriever's own results for each query of the last search, best first: (retriever's place, results).
        self.lists: list[tuple[int, list]] = []

    def _get_queries(self, original_query: str) -> list[QueryBundle]:
        return [QueryBundle(q) for q in self._extra_queries]

    def _run_sync_queries(self, queries):
        results = super()._run_sync_queries(queries)
        self.lists = [(retriever_at, sorted(found, key=lambda n: n.score or 0.0, reverse=True))
                      for (_query, retriever_at), found in results.items()]
        return results

    def fused_candidates(self, fused: list, per_list: int | None = None) -> list:
        """The fused passages first in their order, then what any list of the last search found that fusion left
        out: each list's first `per_list`, or all of it."""
        seen = {r.node.node_id for r in fused}
        rest = [r for _, found in self.lists for r in found[:per_list]
                if r.node.node_id not in seen and not seen.add(r.node.node_id)]
        return list(fused) + rest


# The fiscal years an annual report's statements cover: its own and the two before it (see _years_before_index).
_YEARS_A_REPORT_COVERS = 3


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


NAMED_PASSAGES = 2  # passages per name the question writes in several words (see _named_passages)


_COUNT = re.compile(r"\d[\d,]*(?:\.\d+)?(?:\s+(?:thousand|million))?\s+(?:[a-z][\w-]*\s+){0,2}?(\w[\w-]*)", re.I)
# The count after its noun: "our employee headcount worldwide was 48,310", "a workforce of approximately 91,000".
# Found by its link and figure first, then the three words before it: a pattern that starts at every word to look
# ahead for a link costs most of a millisecond per passage.
_LINKED_COUNT = re.compile(r"\b" + COUNT_AFTER_NOUN_LINK + r"\d", re.I)
_WORD = re.compile(r"\w[\w-]*")
_OF_RECORD = re.compile(r"(?:\s+[a-z][\w-]*){0,2}?\s+of\s+record\b", re.I)


def _counted_nouns(text: str):
    """The words that a figure in the text counts: the word after it ("12,500 employees", invented), and the three words
    before a figure stated after its noun ("headcount worldwide was 48,310")."""
    for m in _COUNT.finditer(text):
        yield m.group(1)
        # A noun that runs on into what it is of ("52,140 stockholder accounts of record"): the holders of record
        # Item 201 asks for, whatever the filer calls them.
        if _OF_RECORD.match(text, m.end()):
            yield "record"
    for m in _LINKED_COUNT.finditer(text):
        yield from _WORD.findall(text, max(0, m.start() - 60), m.start())[-3:]


def _counting(nodes: list, counted: list[str], topic_words: list[str]) -> set[str]:
    """The ids of the passages where a number counts what the question counts (`counted`, QuestionPlan.counted:
    "employees", "holders of record"): "nearly 62,000 employees", "8,415 holders of record"; a passage that only
    shares the words ("Employee Retirement Income Security Act") states no count. The counted words are the
    question's own and the regulation's words for the Item."""
    words = counted + " ".join(topic_words).split()
    stems = {stem(w) for w in words if len(w) > 3 and w.lower() not in STOP_WORDS}
    # An English compound names its kind last: "319 stockholders of record" and "shareholders" count the question's
    # "holders" of record.
    heads = tuple(stem(w) for w in counted if len(w) > 3 and w.lower() not in STOP_WORDS)
    return {n.node.node_id for n in nodes
            if any((noun := stem(w)) in stems or noun.endswith(heads) for w in _counted_nouns(n.node.text))}


def _period_warnings(unavailable: list[str]) -> list[str]:
    """What the passages of a search cannot speak for: periods no indexed report covers, and fourth quarters with no
    third-quarter 10-Q to compute them from (the annual report covers the quarter, and may print it)."""
    fourth = [label for label in unavailable if " Q4 " in f" {label} "]  # see Retriever._quarter_groups
    others = [label for label in unavailable if label not in fourth]
    return ([f"{', '.join(fourth)} is filed only inside its annual report, and no third-quarter 10-Q of that year is "
             f"indexed to take the nine months from the year; the annual report's passages are searched, so check "
             f"that a figure is the quarter's, not the year's."] if fourth else []) + \
        ([f"No indexed report covers {', '.join(others)}; the passages come from the filings that are indexed, so "
          f"check the period each one speaks of."] if others else [])


def _counting_first(nodes: list, counted: list[str], topic_words: list[str]) -> list:
    """For a question that counts something, the passages that state a count of it (see _counting) first, each
    group in search order."""
    if not counted:
        return nodes
    counting = _counting(nodes, counted, topic_words)
    return sorted(nodes, key=lambda n: n.node.node_id not in counting)  # stable: search order within each


# Fewer words than this in Item 1's first chunk: a preamble, not yet the description of the business.
PREAMBLE_WORDS = 80
CONTINUED_PLACES = 5  # the leading places whose passage, cut at a lead-in, brings its continuation
OUTLINE_PASSAGES = 2  # an Item's opening passages a question about it as a whole reads, per company (_item_outline)

