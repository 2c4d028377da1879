"""Sections: the Item headings of the body (not those of the table of contents), chosen as the ordered chain of
greatest weight; Signatures, and financial statements printed after the last Item, as sections of their own."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .items import ITEM_HEAD_RE, PART_HEAD_RE, letters, section_scheme
from .results import Block, ParsedFiling, Section

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
    labels, titles, rank_map = section_scheme(str(parsed.meta.get("form", "")))
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
        block_part = (m.group("part") or part).upper()
        ranks = rank_map.get((block_part, number)) or rank_map.get(("", number))
        if not ranks:
            continue
        rest = m.group("rest")
        canonical = titles[ranks[0]]
        if len(block.text) > _HEADING_MAX_CHARS and not letters(rest).startswith(letters(canonical)[:12]):
            continue  # a paragraph that happens to start with "Item 7 ...": a cross-reference, not a heading
        next_text = blocks[i + 1].text if i + 1 < len(blocks) and blocks[i + 1].kind == "text" else ""
        candidates.append(_Candidate(i, block.char_start, ranks, _item_title(rest, canonical, next_text)))
    chosen = _best_item_chain(candidates, len(text))

    starts: list[tuple[int, str, str]] = []  # (char_start, item, title)
    for cand, rank in chosen:
        start = cand.pos
        prev = blocks[cand.block - 1] if cand.block else None
        if prev is not None and prev.kind == "text" and PART_HEAD_RE.match(prev.text) and len(prev.text) <= 120:
            start = prev.char_start  # "PART II" right above "Item 5" opens the section with it
            if starts and start <= starts[-1][0]:
                start = cand.pos
        starts.append((start, labels[rank], cand.title))
    if starts:
        last_block = chosen[-1][0].block
        for block in blocks[last_block + 1 :]:
            if block.kind == "text" and len(block.text) <= 30 and _SIGNATURES_RE.match(block.text):
                starts.append((block.char_start, "Signatures", "Signatures"))
                break
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
