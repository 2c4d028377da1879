"""Filing text -> chunks: section-aware splitting sized with the embedding model's own tokenizer."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Sequence

from ..dates import dates_named
from ..parse import STATEMENT_CAPTIONS, ParsedFiling, Section, statement_pages
from ..words import ends_sentence

# Bump when the parsed text or the chunk layout changes: shards are rebuilt rather than mixed with new ones (only
# chunks whose text changed are embedded again).
CHUNKER_VERSION = "16"


def chunker_version() -> str:
    """CHUNKER_VERSION as it is now (read at call time, so a test that bumps it is seen by the store)."""
    return CHUNKER_VERSION


@dataclass
class _ChunkPiece:
    """A piece a chunk is built from: a paragraph, a table line, a sentence, or a word-piece window."""

    start: int
    end: int
    tokens: int
    table: int = -1  # index of the table block it belongs to, -1 for prose
    is_table_head: bool = False  # one of the table's header lines
    paragraph: bool = False  # a whole prose block (a paragraph, heading or caption), not a piece of one


_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=[\"'(\[]?[A-Z0-9$])")


def _line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        if stop > pos:
            spans.append((pos, stop))
        pos = stop + 1
    return spans


def _sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    for match in _SENTENCE_END.finditer(text, start, end):
        if text[match.start() - 1] == "." and not ends_sentence(text[max(pos, match.start() - 40):match.start()]):
            continue  # "Jane A. Doe", "U.S. Department": one sentence
        spans.append((pos, match.start()))
        pos = match.end()
    if pos < end:
        spans.append((pos, end))
    return [s for s in spans if s[1] > s[0]]


class FilingChunker:
    """Section-aware splitting sized with the embedding model's own tokenizer.

    A chunk never crosses an Item; prose breaks at paragraph, then sentence, then word-piece boundaries; a table
    breaks between rows, and a chunk that starts inside a table repeats the table's header line (the years).
    Every chunk text starts with a one-line header (company, form, fiscal year, Item) and stays within
    `chunk_tokens` word pieces, header included, so the embedder reads all of it.

    A primary statement's table is the exception: it starts its own chunk, caption first, and its chunks hold up to
    `statement_tokens`. A computed figure (a margin, a ratio, free cash flow) takes its inputs from rows a dozen
    lines apart, and the one passage an analyst checks it against must hold both; the embedder reads the caption
    and top rows, and keyword search and the facts layer read every row.
    """

    MIN_SECTION_TOKENS = 40
    # A line between a statement and the next page ("The accompanying notes are an integral part of these
    # statements.", a running header with the company's name) is no longer than this: one under a statement rides
    # with it, one above a statement's caption rides with the caption.
    _PAGE_LINE_TOKENS = 24

    def __init__(self, tokenizer, chunk_tokens: int, statement_tokens: int | None = None):
        self.tokenizer = tokenizer
        self.chunk_tokens = chunk_tokens
        self.statement_tokens = max(statement_tokens or chunk_tokens, chunk_tokens)

    # Texts the tokenizer encodes at once. Every block of a long Item at once left ~100 MB of encodings behind on
    # a 12 MB filing (memory a process does not hand back); counts are the same a batch at a time.
    COUNT_BATCH = 256

    def count(self, texts: Sequence[str]) -> list[int]:
        counts: list[int] = []
        for start in range(0, len(texts), self.COUNT_BATCH):
            enc = self.tokenizer(list(texts[start:start + self.COUNT_BATCH]), add_special_tokens=False)["input_ids"]
            counts.extend(len(ids) for ids in enc)
        return counts

    @staticmethod
    def header(meta: dict, section: Section) -> str:
        who = meta.get("company") or meta.get("ticker") or "Unknown company"
        if meta.get("ticker") and meta.get("company"):
            who = f"{meta['company']} ({meta['ticker']})"
        parts = [who, meta.get("form") or "filing"]
        quarter = meta.get("fiscal_period") if meta.get("fiscal_period") in ("Q1", "Q2", "Q3", "Q4") else None
        if meta.get("fiscal_year"):
            parts.append(f"{quarter} FY{meta['fiscal_year']}" if quarter else f"FY{meta['fiscal_year']}")
        parts.append(f"{section.item}: {section.title}" if section.title else section.item)
        return " · ".join(parts)

    def split(self, parsed: ParsedFiling, meta: dict) -> list[dict]:
        """Chunks as dicts: text, section, section_title, char_start, char_end, page_start, page_end, statement."""
        text = parsed.text
        sections = parsed.sections or [Section("Document", "", 0, len(text), 1, _page_at(parsed, len(text) - 1))]
        blocks = sorted(parsed.blocks, key=lambda b: b.char_start)
        pages = statement_pages(parsed)
        statement_tables = {(blk.char_start, blk.char_end) for blk in blocks if _is_statement_table(parsed, blk, pages)}
        chunks: list[dict] = []
        b = 0
        carried: tuple[Section, list] | None = None
        for n, section in enumerate(sections):
            section_blocks = []
            while b < len(blocks) and blocks[b].char_start < section.char_end:
                if blocks[b].char_end > section.char_start:
                    section_blocks.append(blocks[b])
                b += 1
            if carried:
                # A tiny Item ("Item 1B. Unresolved Staff Comments: None.") rides with the next one rather than
                # becoming a fragment chunk that neither search nor a reader can use.
                first, first_blocks = carried
                # Labelled as the substantial Item it joins, so a filter or a citation on that Item finds it.
                title = f"{section.title} (with {first.item}: {first.title})" if first.title else (
                    f"{section.title} (with {first.item})")
                section = Section(section.item, title, first.char_start, section.char_end, first.page_start,
                                  section.page_end)
                section_blocks = first_blocks + section_blocks
                carried = None
            if not section_blocks:
                continue
            size = sum(self.count([parsed.text[blk.char_start:blk.char_end] for blk in section_blocks]))
            if size < self.MIN_SECTION_TOKENS and n + 1 < len(sections):
                carried = (section, section_blocks)
                continue
            head = self.header(meta, section)
            chunks.extend(self._pack(parsed, section, head, section_blocks, statement_tables))
        _mark_statements(parsed, chunks, pages)
        return chunks

    def _pieces(self, text: str, section_blocks, budget: int) -> list[_ChunkPiece]:
        raw: list[tuple[int, int, int, bool]] = []
        for i, block in enumerate(section_blocks):
            if block.kind == "table":
                header_len = len(block.table_header)
                for start, end in _line_spans(text, block.char_start, block.char_end):
                    raw.append((start, end, i, start < block.char_start + header_len))
            else:
                raw.append((block.char_start, block.char_end, -1, False))
        counts = self.count([text[s:e] for s, e, _, _ in raw])
        units: list[_ChunkPiece] = []
        for (start, end, table, head), n in zip(raw, counts):
            if n <= budget:
                units.append(_ChunkPiece(start, end, n, table, head, paragraph=table < 0))
            else:  # too long for one chunk
                units.extend(self._sentence_pieces(text, _ChunkPiece(start, end, n, table, head), budget))
        return units

    def _sentence_pieces(self, text: str, unit: _ChunkPiece, budget: int) -> list[_ChunkPiece]:
        """A piece's sentences, and word-piece windows for a sentence still longer than `budget`."""
        pieces = _sentence_spans(text, unit.start, unit.end)
        out: list[_ChunkPiece] = []
        for (ps, pe), pn in zip(pieces, self.count([text[s:e] for s, e in pieces])):
            if pn <= budget:
                out.append(_ChunkPiece(ps, pe, pn, unit.table, unit.is_table_head))
            else:
                out.extend(_ChunkPiece(ws, we, wn, unit.table, unit.is_table_head)
                           for ws, we, wn in self._windows(text, ps, pe, budget))
        return out

    def _windows(self, text: str, start: int, end: int, budget: int):
        enc = self.tokenizer(text[start:end], add_special_tokens=False, return_offsets_mapping=True)
        offsets = enc["offset_mapping"]
        for i in range(0, len(offsets), budget):
            window = offsets[i : i + budget]
            yield start + window[0][0], start + window[-1][1], len(window)

    def _kept_before_statement(self, parsed: ParsedFiling, current: list[_ChunkPiece], table_block, start: int) -> int:
        """How many of the pieces gathered so far stay in their chunk when a statement's table starts at `start`:
        the short lines and caption lines just above it on its page (the statement's title, "in millions", a
        running header) go along with the statement."""
        caption = getattr(table_block, "caption", "")
        page = _page_at(parsed, start)
        lead = len(current)
        while lead and current[lead - 1].table < 0 and _page_at(parsed, current[lead - 1].start) == page and (
                current[lead - 1].tokens <= self._PAGE_LINE_TOKENS
                or parsed.text[current[lead - 1].start:current[lead - 1].end].strip() in caption):
            lead -= 1
        return lead

    def _table_opening(self, text: str, table_block, unit: _ChunkPiece, budget: int, table_header: str,
                       table_header_tokens: int) -> tuple[str, int]:
        """What a chunk that opens inside a table repeats above its first row, and its word pieces: the table's
        caption and column headers, so every number keeps its year (only the years when a long caption does not
        fit), then the label of the row group that row continues (see row_group_label)."""
        prefix, used = "", 0
        if table_header and table_header_tokens + unit.tokens <= budget:
            prefix, used = table_header, table_header_tokens
        elif table_header and table_block.table_header:
            prefix = table_block.table_header
            used = self.count([prefix])[0]
        group = row_group_label(text, table_block, unit.start)
        group_tokens = self.count([group])[0] + 1 if group else 0
        if group and used + group_tokens + unit.tokens <= budget:
            prefix = f"{prefix}\n{group}" if prefix else group
            used += group_tokens
        return prefix, used

    def _pack(self, parsed: ParsedFiling, section: Section, head: str, section_blocks,
              statement_tables: set[tuple[int, int]]) -> list[dict]:
        text = parsed.text
        head_tokens = self.count([head])[0] + 1
        budget = self.chunk_tokens - head_tokens
        statement_budget = self.statement_tokens - head_tokens
        statements = {i for i, blk in enumerate(section_blocks) if (blk.char_start, blk.char_end) in statement_tables}
        units = self._pieces(text, section_blocks, budget)
        # What a chunk that starts inside a table repeats: the table's caption (statement title, "in millions")
        # and its column headers (the years).
        table_headers = {
            i: "\n".join(x for x in (getattr(blk, "caption", ""), blk.table_header) if x)
            for i, blk in enumerate(section_blocks)
            if blk.kind == "table" and (blk.table_header or getattr(blk, "caption", ""))
        }
        header_tokens = dict(zip(table_headers, self.count(list(table_headers.values()))))
        out: list[dict] = []
        current: list[_ChunkPiece] = []
        used = 0
        prefix = ""

        def flush():
            nonlocal current, used, prefix
            if current:
                start, end = current[0].start, current[-1].end
                out.append({"text": f"{head}\n{prefix + chr(10) if prefix else ''}{text[start:end]}",
                            "section": section.item, "section_title": section.title,
                            "char_start": start, "char_end": end,
                            "page_start": _page_at(parsed, start), "page_end": _page_at(parsed, end - 1)})
            current, used, prefix = [], 0, ""

        lead_tokens = budget // 3
        i = 0
        while i < len(units):
            unit = units[i]
            if unit.table in statements and current and current[-1].table != unit.table:
                # A statement starts its own chunk; its caption lines and the page's running header go along.
                lead = self._kept_before_statement(parsed, current, section_blocks[unit.table], unit.start)
                if lead:
                    carried, current = current[lead:], current[:lead]
                    flush()
                    current, used = carried, sum(u.tokens for u in carried)
            in_statement = (unit.table in statements and all(u.table in (-1, unit.table) for u in current)) or (
                unit.table < 0 and unit.tokens <= self._PAGE_LINE_TOKENS and bool(current) and current[-1].table in statements)
            limit = statement_budget if in_statement else budget
            if current and used + unit.tokens > limit:
                # A heading or a lead-in ("The following table presents ...:") introduces what follows it: one
                # left at the end of a full chunk goes on to open the next, where the passage it names is, rather
                # than lending its words to the passage before (about a fifth of the prose chunks of 10-Ks ended on
                # a heading). When its paragraph does not fit beside it, the paragraph's first sentences do.
                lead = _lead_in(text, current, lead_tokens, unit.table)
                lead_used = sum(u.tokens for u in current[len(current) - lead:])
                sentences = [unit]
                if lead and unit.paragraph and lead_used + unit.tokens > limit:
                    sentences = self._sentence_pieces(text, unit, budget)  # its first sentences join the lead
                if lead and lead_used + sentences[0].tokens > limit:
                    lead = 0  # not even the passage's first sentence fits beside it: the lead stays where it is
                if lead and lead < len(current) and used - lead_used >= lead_tokens:
                    carried, current = current[-lead:], current[:-lead]
                    flush()
                    current, used = carried, lead_used
                if lead and len(sentences) > 1:
                    units[i:i + 1] = sentences
                    continue
                if used + unit.tokens > limit:
                    flush()
            if not current and unit.table >= 0 and not unit.is_table_head:
                prefix, used = self._table_opening(text, section_blocks[unit.table], unit, budget,
                                                   table_headers.get(unit.table, ""), header_tokens.get(unit.table, 0))
            current.append(unit)
            used += unit.tokens
            i += 1
        flush()
        return out


LIST_MARKS = "•●◦▪▫■□–—-*·"
_NOTE_MARK = re.compile(r"\(?(?:\d{1,2}|[a-z])\)|[*†‡§]")  # "(1) Includes ...", "(a)", "*"


def row_group_label(text: str, block, start: int) -> str:
    """The label of the row group that the table row at `start` continues, for a chunk that opens there: the label
    set in a row's first cell for the rows below it whose first cell is empty ("Product | United States | ..." over
    "| International | ..." and "| Total | ..."), or a label-only line heading the rows below it ("Segment A"
    over its "Revenue" and "Operating income" rows). Without it, a continued group's rows (a product's total, a
    segment's lines) name nothing they belong to: a question naming the product or segment finds no word of it.
    Empty when the row starts its own group, or none is set."""
    lines = text[block.char_start + len(block.table_header):start].splitlines()
    first = text[start:text.find("\n", start) if "\n" in text[start:] else len(text)]
    continues_label = first.lstrip().startswith("|")  # the row's own label cell is empty
    for line in reversed(lines):
        cells = [c.strip() for c in line.split("|")]
        if not line.strip():
            continue
        if len(cells) == 1 or not any(cells[1:]):
            # A line with a label and no values heads the rows below it: words, or the period the rows are of
            # ("Three months ended June 30, 2025" over a table whose columns are segments).
            worded = not any(ch.isdigit() for ch in cells[0]) or bool(dates_named(cells[0]))
            return cells[0] if cells[0] and worded else ""
        if continues_label and cells[0]:
            return cells[0]
        if not continues_label:
            continue  # a labelled row of the same group: look further up for the group's heading line
    return ""


def _lead_in(text: str, pieces: list[_ChunkPiece], max_tokens: int, table: int = -1) -> int:
    """How many of the last `pieces` introduce what follows them, together at most `max_tokens` word pieces: whole
    prose blocks that close no sentence, a heading ("Intellectual Property", "CRITICAL ACCOUNTING ESTIMATES") or a
    lead-in ending in a colon ("The following table presents ...:"). Not a list's item or a table's note, which
    speak of what comes before them. When what follows is a line of table `table`, that table's header lines (its
    years, "Year Ended" above the dates) introduce it too, with the lead-in before them: a table's header and
    caption left at the end of one chunk and its rows at the start of the next leave neither chunk saying what the
    figures are ("Sales to direct customers which represented 10% or more of revenue ... in the following table:",
    then "Customer A | 12%")."""
    count, tokens = 0, 0
    heads = table >= 0
    for piece in reversed(pieces):
        tokens += piece.tokens
        if tokens > max_tokens:
            break
        if heads and piece.table == table and piece.is_table_head:
            count += 1
            continue
        heads = False
        if not piece.paragraph:
            break
        block = text[piece.start:piece.end].strip()
        if block[:1] in LIST_MARKS or _NOTE_MARK.match(block) or block.endswith((".", "!", "?", ";")):
            break
        count += 1
    return count


def _is_statement_table(parsed: ParsedFiling, block, pages: dict[int, str]) -> bool:
    """The statement's own table on a statement page: its caption (or first line) names the statement, which the
    footnote tables printed under it and a contents page listing the statements do not."""
    kind = pages.get(_page_at(parsed, block.char_start)) if block.kind == "table" else None
    if not kind:
        return False
    first_line = parsed.text[block.char_start:block.char_end].split("\n", 1)[0]
    named = re.sub(r"\s+", "", f"{getattr(block, 'caption', '')}{first_line}").lower()
    return bool(STATEMENT_CAPTIONS[kind].search(named))


def _mark_statements(parsed: ParsedFiling, chunks: list[dict], pages: dict[int, str]) -> None:
    """Each chunk's primary statement ("" for none): that of the page it starts on, or of the page it runs onto
    when that page's caption is inside the chunk (a chunk that ends just before it does not hold the statement)."""
    for chunk in chunks:
        kind = pages.get(chunk["page_start"], "")
        if not kind and chunk["page_end"] != chunk["page_start"]:
            kind = pages.get(chunk["page_end"], "")
            on_page = parsed.text[parsed.page_starts[chunk["page_end"] - 1]:chunk["char_end"]]
            if kind and not STATEMENT_CAPTIONS[kind].search(re.sub(r"\s+", "", on_page).lower()):
                kind = ""
        chunk["statement"] = kind


def _page_at(parsed: ParsedFiling, offset: int) -> int:
    if not parsed.page_starts:
        return 1
    return max(1, bisect.bisect_right(parsed.page_starts, max(offset, 0)))
