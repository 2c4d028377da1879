"""Sections: the Item headings of the body (not those of the table of contents), chosen as the ordered chain of
greatest weight; Signatures, and financial statements printed after the last Item, as sections of their own."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .items import ITEM_HEAD_RE, PART_HEAD_RE, letters, section_scheme
from .results import Block, ParsedFiling, Section
from .xref import cross_reference_starts

_SIGNATURES_RE = re.compile(r"^SIGNATURES?\b[\s.:]*$", re.I)
_HEADING_MAX_CHARS = 200  # longer blocks are only headings when the Item's own title follows the number
_TOC_GAP_CHARS = 1000  # a body heading is followed by at least this much text before the next candidate


@dataclass
class _Candidate:
    block: int
    pos: int
    ranks: list[int]
    title: str
    quality: float = 0.0


def _item_title(rest: str, canonical: str, next_text: str) -> str:
    """The heading's own title, tidied; the canonical title where the heading shows none or a broken one."""
    rest = rest.strip(" .:-–—|")
    if not rest and next_text and not ITEM_HEAD_RE.match(next_text):
        rest = next_text.strip(" .:-–—|")
        if letters(rest).startswith(letters(canonical)):
            return canonical  # the title line ran on into the text ("Unresolved Staff Comments None. 15")
        if len(rest) > 120:
            rest = _leading_title(rest)
    if len(rest) > 120:
        rest = canonical if letters(rest).startswith(letters(canonical)[:12]) else _leading_title(rest)
    if len(letters(rest)) < 5 and letters(canonical).startswith(letters(rest)):
        return canonical  # missing, or cut like "B" + "USINESS" in a PDF
    if rest.isupper():
        return canonical if letters(rest).startswith(letters(canonical)[:12]) else _title_case(rest)
    return rest


def _title_case(text: str) -> str:
    """'EXHIBIT AND FINANCIAL STATEMENT SCHEDULES' -> 'Exhibit and Financial Statement Schedules'."""
    words = text.lower().split()
    return " ".join(w if n and w in _TITLE_SMALL_WORDS else w[:1].upper() + w[1:] for n, w in enumerate(words))


_TITLE_SMALL_WORDS = frozenset("a an and as by for in of on or the to with about from under".split())


def _leading_title(text: str) -> str:
    """The Title-Case words a heading ran into its text with: "Selected Financial Data The following ..."."""
    words: list[str] = []
    for word in text.split()[:16]:
        if not (word[0].isupper() or word[0] in "[&(" or word.lower() in _TITLE_SMALL_WORDS):
            break
        words.append(word)
    while words and (words[-1].lower() in _TITLE_SMALL_WORDS or words[-1] in ("The", "A", "An", "Our", "We", "This")):
        words.pop()
    return " ".join(words).rstrip(" .:,;")


def find_sections(parsed: ParsedFiling) -> list[Section]:
    """The filing's sections, end to end: Cover, the Items found in the body, Signatures and appended financial
    statements where there are such headings; one "Document" section when no Item heading is found."""
    text, blocks = parsed.text, parsed.blocks
    quarterly = "10-Q" in filing_form(parsed).upper()
    labels, titles, rank_map = section_scheme("10-Q" if quarterly else str(parsed.meta.get("form", "")))
    candidates = _item_candidates(blocks, titles, rank_map, quarterly)
    chosen = _best_item_chain(candidates, len(text))
    starts = _chain_starts(blocks, chosen, labels, titles)
    indexed: list[tuple[int, str, str]] = []
    if quarterly:
        starts = _with_unheaded_statements(parsed, starts, candidates, chosen)
    elif len(chosen) < _XREF_MAX_HEADINGS and (indexed := cross_reference_starts(parsed, labels, titles)):
        starts = indexed  # the body has no Item headings: the cross-reference index says where each Item is
    if starts:
        signatures = next((b for b in blocks if b.char_start > starts[-1][0] and b.kind == "text"
                           and len(b.text) <= 30 and _SIGNATURES_RE.match(b.text)), None)
        if signatures is not None:
            starts.append((signatures.char_start, "Signatures", "Signatures"))
        if chosen and not indexed:
            last_block = chosen[-1][0].block
            item15 = next((cand.block for cand, rank in chosen if labels[rank] == "Item 15"), last_block)
            appendix = _financial_statements_appendix(parsed, starts, item15)
            if appendix is not None:
                starts.append((appendix.char_start, "Financial Statements", "Financial Statements"))
                starts.sort(key=lambda s: s[0])
        if starts[0][0] > 0:
            starts.insert(0, (0, "Cover", "Cover page and table of contents"))
    else:
        starts = [(0, "Document", "")]
    sections = []
    for n, (start, item, title) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(text)
        # Sections run block start to block start; the blank line before the next one belongs to this one.
        sections.append(Section(item, title, start, end, parsed.page_at(start), parsed.page_at(max(start, end - 1))))
    return sections


_XREF_MAX_HEADINGS = 3  # with fewer Item headings than this in the body, a cross-reference index is read instead
_QUARTERLY_COVER_RE = re.compile(r"\bQUARTERLY\s+REPORT\b", re.I)
_OTHER_INFORMATION_RE = re.compile(r"^PART\s+II\b\W*OTHER\s+INFORMATION\b", re.I)


def filing_form(parsed: ParsedFiling) -> str:
    """The form from the metadata (dei:DocumentType, the SEC header, the cover); where none is known, "10-Q" when
    the body shows a quarterly report (the cover's "quarterly report", Form 10-Q's "PART II - OTHER INFORMATION")."""
    form = str(parsed.meta.get("form") or "")
    if form:
        return form
    if _QUARTERLY_COVER_RE.search(parsed.text[:5000]) or any(
            b.kind == "text" and len(b.text) <= 80 and _OTHER_INFORMATION_RE.match(b.text) for b in parsed.blocks):
        return "10-Q"
    return ""


def _item_candidates(blocks: list[Block], titles: list[str], rank_map: dict[tuple[str, str], list[int]],
                     quarterly: bool) -> list[_Candidate]:
    """Every block that reads as an Item heading, with the ranks (Items of the form) it may stand for."""
    candidates: list[_Candidate] = []
    part = ""
    for i, block in enumerate(blocks):
        if block.kind != "text":
            continue
        head = block.text[:400]
        if m := PART_HEAD_RE.match(head):
            if len(block.text) <= 120:
                part = m.group(1).upper()
            continue
        m = ITEM_HEAD_RE.match(head)
        if not m:
            continue
        number = m.group("num").lstrip("0") + (m.group("letter") or "").upper()
        if m.group("sub"):  # "Item 8.01" of a current report
            number = f"{m.group('num').lstrip('0')}.{m.group('sub')}"
        rest = m.group("rest")
        next_text = blocks[i + 1].text if i + 1 < len(blocks) and blocks[i + 1].kind == "text" else ""
        if quarterly:
            ranks = _quarterly_ranks(number, (m.group("part") or "").upper(), part, rest or next_text[:120],
                                     titles, rank_map)
        else:
            block_part = (m.group("part") or part).upper()
            ranks = rank_map.get((block_part, number)) or rank_map.get(("", number))
        if not ranks:
            continue
        canonical = titles[ranks[0]]
        if len(block.text) > _HEADING_MAX_CHARS and not letters(rest).startswith(letters(canonical)[:12]):
            continue  # a paragraph that happens to start with "Item 7 ...": a cross-reference, not a heading
        candidates.append(_Candidate(i, block.char_start, ranks, _item_title(rest, canonical, next_text)))
    return candidates


def _quarterly_ranks(number: str, stated_part: str, running_part: str, title: str, titles: list[str],
                     rank_map: dict[tuple[str, str], list[int]]) -> list[int]:
    """Which Item of Form 10-Q an "Item N" heading is: both Parts number from 1, so the Part the heading states,
    else the Item's own title (Part I Item 2 is the MD&A, Part II Item 2 the sales of equity securities), else the
    last "PART" heading above it; where none tells, both, and the chain of headings decides."""
    if stated_part in ("I", "II"):
        return rank_map.get((stated_part, number), [])
    ranks = rank_map.get(("", number), [])
    if len(ranks) < 2:
        return ranks
    heading = letters(title)[:80]
    by_title = [r for r in ranks if heading and letters(titles[r])[:12] in heading]
    if len(by_title) == 1:
        return by_title
    by_part = [r for r in ranks if r in rank_map.get((running_part, number), [])]
    return by_part or ranks


def _chain_starts(blocks: list[Block], chosen: list[tuple[_Candidate, int]], labels: list[str],
                  titles: list[str]) -> list[tuple[int, str, str]]:
    """(char_start, item, title) of the chosen headings; a "PART" heading right above one opens its section."""
    starts: list[tuple[int, str, str]] = []
    for cand, rank in chosen:
        start = cand.pos
        prev = blocks[cand.block - 1] if cand.block else None
        if prev is not None and prev.kind == "text" and PART_HEAD_RE.match(prev.text) and len(prev.text) <= 120:
            start = prev.char_start  # "PART II" right above "Item 5" opens the section with it
            if starts and start <= starts[-1][0]:
                start = cand.pos
        title = cand.title
        if rank != cand.ranks[0] and title == titles[cand.ranks[0]]:
            title = titles[rank]  # an untitled "Item 1" read as Part II's takes Part II's title
        starts.append((start, labels[rank], title))
    return starts


# The captions of the primary financial statements (Regulation S-X): where a 10-Q prints them without an "Item 1"
# heading, the first of them opens Part I Item 1.
_STATEMENT_CAPTION_RE = re.compile(
    r"\b(?:CONDENSED\s+)?CONSOLIDATED\s+(?:STATEMENTS?\s+OF\s+(?:OPERATIONS|INCOME|EARNINGS|COMPREHENSIVE|CASH"
    r"\s+FLOWS|FINANCIAL\s+POSITION)|BALANCE\s+SHEETS?)\b|\b(?:CONDENSED\s+)?BALANCE\s+SHEETS?\b",
    re.I,
)
_CAPTION_WINDOW = 200  # a PDF paragraph may run the page header and the caption together
_PAGE_TOP_BLOCKS = 4


def _with_unheaded_statements(parsed: ParsedFiling, starts: list[tuple[int, str, str]],
                              candidates: list[_Candidate], chosen: list[tuple[_Candidate, int]]
                              ) -> list[tuple[int, str, str]]:
    """A 10-Q whose financial statements follow the cover and table of contents with no "Item 1" heading: Form
    10-Q puts them in Part I Item 1, so the first statement caption after the table of contents opens it. A
    "Part I Item 1" that is only the table of contents' line (little text before the next heading) moves there."""
    if not chosen:
        return starts
    first = 0
    if starts[0][1] == "Part I Item 1":
        if chosen[0][0].quality >= 1.0 or len(chosen) < 2:
            return starts
        if not any(chosen[0][0].block < c.block < chosen[1][0].block for c in candidates):
            return starts  # no other heading follows it before the next Item: not a table of contents line
        first = 1
    body_start = chosen[first][0]
    toc = [c for c in candidates if c.block < body_start.block]
    search_from = toc[-1].block + 1 if toc else 0
    blocks = parsed.blocks
    for i in range(search_from, body_start.block):
        block = blocks[i]
        if not _STATEMENT_CAPTION_RE.search(block.caption if block.kind == "table" else block.text[:_CAPTION_WINDOW]):
            continue
        if block.kind == "text" and i >= _PAGE_TOP_BLOCKS and blocks[i - _PAGE_TOP_BLOCKS].page == block.page:
            continue  # not near the top of its page: a sentence naming a statement, not its caption
        start = block
        for above in blocks[max(search_from, i - _PAGE_TOP_BLOCKS + 1) : i][::-1]:
            if above.page != block.page or above.kind != "text" or len(above.text) > 120:
                break
            start = above  # "PART I", the company's name above the caption open the statements with it
        title = "Financial Statements"
        return [(start.char_start, "Part I Item 1", title)] + starts[first:]
    return starts


_FS_HEADING_RE = re.compile(
    r"^(?:INDEX\s+TO\s+(?:THE\s+)?(?:CONSOLIDATED\s+)?FINANCIAL\s+STATEMENTS|REPORTS?\s+OF\s+INDEPENDENT\s+"
    r"REGISTERED\s+PUBLIC\s+ACCOUNTING\s+FIRM|CONSOLIDATED\s+(?:STATEMENTS?\s+OF|BALANCE\s+SHEETS?))",
    re.I,
)
_POINTER_MAX_CHARS = 3000


def _financial_statements_appendix(parsed: ParsedFiling, starts: list[tuple[int, str, str]],
                                   search_from: int) -> Block | None:
    """Where Item 8 only points elsewhere ("see page F-1", "included following Part IV"), the heading that opens
    the financial statements printed in Item 15 or after the last Item, so they are not filed under Item 16 or
    Signatures. Such a heading opens a page; the list of statements in Item 15(a) does not."""
    labels = [item for _, item, _ in starts]
    if "Item 8" not in labels:
        return None
    n = labels.index("Item 8")
    if not any(label.startswith("Item ") for label in labels[n + 1:]):
        return None  # no Item follows Item 8: the statements printed after it are its own text
    item8_end = starts[n + 1][0] if n + 1 < len(starts) else len(parsed.text)
    if item8_end - starts[n][0] > _POINTER_MAX_CHARS:
        return None
    blocks = parsed.blocks
    for i in range(search_from + 1, len(blocks)):
        block = blocks[i]
        if block.kind != "text" or len(block.text) > 150 or not _FS_HEADING_RE.match(block.text):
            continue
        if i >= 3 and blocks[i - 3].page == block.page:
            continue  # not near the top of its page
        return block
    return None


def _best_item_chain(candidates: list[_Candidate], text_len: int) -> list[tuple[_Candidate, int]]:
    """Choose the ordered sequence of Item headings (rank and position both increasing) of greatest weight.

    A candidate weighs by how much text follows it before the next candidate: table-of-contents entries sit a
    line apart and weigh almost nothing, body headings weigh ~1. Ties go to the earliest chain, so repeated
    running headers ("Item 7" atop each PDF page) resolve to the first one.
    """
    if not candidates:
        return []
    # The gap runs to the next candidate of another Item: "Item 14." followed by "Item 14(a)(1)" sub-headings, or
    # "Item 7" atop every page of a PDF, is one heading followed by its text.
    nxt = text_len
    for n in range(len(candidates) - 1, -1, -1):
        cand = candidates[n]
        if n + 1 < len(candidates) and candidates[n + 1].ranks != cand.ranks:
            nxt = candidates[n + 1].pos
        cand.quality = min(1.0, (nxt - cand.pos) / _TOC_GAP_CHARS)
    n_ranks = 1 + max(r for c in candidates for r in c.ranks)
    # best_from[r] = (score, node) of the best chain starting with rank r among nodes after the current position
    best_from: list[tuple[float, tuple[int, int] | None]] = [(0.0, None)] * (n_ranks + 1)
    successor: dict[tuple[int, int], tuple[int, int] | None] = {}
    score: dict[tuple[int, int], float] = {}
    for ci in range(len(candidates) - 1, -1, -1):
        cand = candidates[ci]
        computed = []
        for rank in cand.ranks:
            best_next, best_node = 0.0, None
            for r in range(rank + 1, n_ranks):
                s, node = best_from[r]
                if node is not None and (s > best_next or (s == best_next and best_node is not None
                                                              and node[0] < best_node[0])):
                    best_next, best_node = s, node
            node = (ci, rank)
            successor[node] = best_node
            score[node] = cand.quality + best_next
            computed.append((rank, node))
        for rank, node in computed:  # update after computing: one candidate cannot follow itself
            if score[node] >= best_from[rank][0] or best_from[rank][1] is None:
                best_from[rank] = (score[node], node)
    start = max(score, key=lambda node: (score[node], -node[0]))
    chain = []
    node: tuple[int, int] | None = start
    while node is not None:
        chain.append((candidates[node[0]], node[1]))
        node = successor[node]
    return chain
