"""What the extractive answer can quote from a source: its sentences, and its table rows with their column header
(the years), their unit note ("in millions") and the group heading above them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import groupby

from ..dates import dates_named
from ..index.chunking import LIST_MARKS
from ..numbers import parse_numbers
from ..parse.items import is_heading
from ..schema import Citation
from ..words import sentence_ends, split_sentences, tokens

# Words an Item or Part heading line runs to with its title ("Item 7. Management's Discussion and Analysis of ...");
# a longer line that opens with one is a sentence that names the Item.
ITEM_HEADING_WORDS = 16


@dataclass
class QuotableUnit:
    """A sentence or a table row of a source that the extractive answer can quote, with what it needs to be read
    alone (a row's column header, unit note and group heading) and its score for the question."""

    source: Citation
    kind: str  # "row" | "sentence"
    text: str
    pos: int
    header: str = ""  # the table's column header line(s) for a row
    note: str = ""  # "in millions" etc. for a row
    group: str = ""  # the row's group heading inside the table ("Operating expenses")
    caption: str = ""  # a row's table title above its column header ("Latin America (LATAM)")
    lead: str = ""  # the sentence that introduces a row's table ("... financial information for <segment>:")
    # A title printed in the value columns above the column heads ("| <Metric> (in thousands)" over "| 2025 | 2024"),
    # which names what a table of periods by years counts.
    header_title: str = ""
    score: float = 0.0
    coverage: float = 0.0  # share of the question's content terms in this unit
    features: list[float] = field(default_factory=list)  # what its score is made of (rag.answer.unit_scoring)
    following: str = ""  # the next sentence of the same paragraph (context for the best sentence)
    # A row of a table that prints dollar signs: statements print "$" on a table's first and total rows only, so
    # the unsigned cells between ("<product line> | 31,275") are amounts too.
    in_dollars: bool = False

    @property
    def title(self) -> str:
        """A row's table title: its header's first cell when that names what the table holds ("U.S. RETAIL
        STORES | NUMBER"); empty when it repeats the group heading, the unit note or the period columns."""
        title = self.header.splitlines()[0].split("|")[0].strip() if self.header else ""
        if title == self.group or len(title) > 60 or not re.search(r"[A-Za-z]{3}", title):
            return ""
        return "" if _UNIT_NOTE.search(title) or _YEARISH.search(title) else title


_CHUNK_HEADER = re.compile(r"^[^|\n]{0,200}·[^|\n]{0,200}$")
_YEARISH = re.compile(r"\b(?:19|20)\d\d\b|\bFY\s?\d{2,4}\b|\b(?:Q[1-4]|quarter|months|weeks|year)s?\b", re.I)
_UNIT_NOTE = re.compile(
    r"\((?:[^()]{0,40}\b)?in\s+(?:millions|thousands|billions)[^()]{0,60}\)|\b(?:in|dollars\s+in)\s+"
    r"(?:millions|thousands|billions)\b(?:,?\s+except[^.|\n]{0,60})?",
    re.I,
)


# A header line's first cell when it is a period itself, not the label column's heading.
_PERIOD_HEAD = re.compile(r"(?:fiscal\s+|fy\s?)?(?:19|20)\d\d", re.I)


def column_heads(header_line: str) -> list[str]:
    """A header line's column heads, in the order of a row's value cells. Its first cell heads the label column
    ("Year Ended December 31,", "(Dollars in millions)") and is left out, unless it is a period: when the label
    cell spans two header rows, the year line starts with its first year ("2024 | 2023 | 2022"), and dropping
    that year would give each figure the next column's year."""
    cells = [c.strip() for c in header_line.split("|")]
    return cells if _PERIOD_HEAD.fullmatch(cells[0]) else cells[1:]


def _holds_amount(values: list[str]) -> bool:
    """A figure among the cells: a number that is neither a year nor a small footnote mark like '(1)'."""
    return any(not (1900 <= n.value <= 2100 and n.ulp == 1.0) and n.value >= 32
               for c in values for n in parse_numbers(c))


def _is_column_header(cells: list[str]) -> bool:
    """'| 2024 | 2023', 'Year Ended December 31, | 2023 | 2022': periods in the value cells, no amounts. A long
    cell is a head only when it names a date ('| As of or for the Three Months Ended June 30, 2025')."""
    values = [c for c in cells[1:] if c]
    if not values or any(len(c) > 40 and not dates_named(c) for c in values):
        return False
    return any(_YEARISH.search(c) for c in values) and not _holds_amount(values)


def _is_title_header(cells: list[str], following: list[str]) -> bool:
    """'Period | Total Number of Shares Purchased | ... | Dollar Value that May Yet Be Purchased', 'U.S. Retail
    Stores | Number', 'U.S. | Stores | U.S. | Stores': a line of column titles in words that heads a table of
    figures (the next table lines hold them). Such a header gives a row labelled only "Total" its meaning."""
    values = [c for c in cells[1:] if c]
    if not values or any(len(c) > 160 or not re.search(r"[A-Za-z]", c) for c in values):
        return False
    if not any(re.search(r"[A-Za-z]{3}", c) for c in cells) or _holds_amount(values):
        return False
    # One column title ("Number") heads a list of counts only when it is short and the next line is a figure:
    # a glossary's "Term | Meaning" lines are not headers.
    single = len(values) == 1
    if single and len(values[0].split()) > 3:
        return False
    for line in following:
        if "|" not in line:
            if len(line.split()) <= 6 and not single:
                continue  # a group heading between rows ("October 5—November 1, 2024")
            return False  # prose before any figure: not a table of amounts
        line_values = line.split("|")[1:]
        if single:
            return _holds_amount(line_values)
        if any(parse_numbers(c) for c in line_values):
            return True
    return False


def _closes_group(row: str, group: str) -> bool:
    """Is the row its group's own total ("Total other income (expense)" under "Other income (expense):")? The
    rows after it ("Income before income taxes", "Net income") are the statement's, not the group's."""
    label = tokens(row.split("|")[0])
    return label[:1] == ["total"] and set(tokens(group)) <= set(label[1:])


def quotable_units(source: Citation) -> list[QuotableUnit]:
    """The source's sentences and table rows in text order, without the chunk's title line. Headings are not units:
    a row carries its group heading, and a bare "None." is quoted with the sentence or heading before it."""
    lines = (source.text or "").splitlines()
    units: list[QuotableUnit] = []
    start = 1 if lines and _CHUNK_HEADER.match(lines[0].strip()) else 0
    lines = lines[:start] + _whole_sentences(lines[start:])
    header_lines: list[str] = []
    header_closed = True
    note = ""
    last_heading = ""
    group = ""
    caption = ""
    above: list[str] = []  # the short lines since the last row or prose: a title, if a column header follows
    lead_in = lead = ""  # the last sentence ending in a colon before a table, and the current table's
    header_title = titled = ""  # the current table's title above its column heads, and one just read (see QuotableUnit)
    pos = 0
    for i, raw in enumerate(lines[start:], start):
        line = raw.strip()
        if not line:
            continue
        m = _UNIT_NOTE.search(line)
        if m:
            note = "in " + re.search(r"millions|thousands|billions", m.group(0), re.I).group(0).lower()
        if "|" in line:
            cells = [c.strip() for c in line.split("|")]
            following = [ln.strip() for ln in lines[i + 1: i + 9] if ln.strip()]
            if _is_column_header(cells) or _is_title_header(cells, following):
                if header_closed:
                    # Lines above a table's column header are its titles ("CONSOLIDATED BALANCE SHEETS", the
                    # company's name, "Latin America (LATAM)" over one region's table), not a group of its rows.
                    header_lines = []
                    header_title, titled = titled, ""
                    caption = " ".join(above)
                    group = ""
                    lead, lead_in = lead_in, ""
                header_lines.append(line)
                header_closed = False
                continue
            header_closed = True
            if not any(ch.isdigit() for ch in line) and not any(c for c in cells[1:]):
                continue  # a title row with no values
            values = [c for c in cells[1:] if c]
            heads_next = bool(following) and _is_column_header([c.strip() for c in following[0].split("|")])
            # "| <Metric> (in thousands, except ...)", "| <Metric> per <item>" above a column header: the title of
            # the table below, printed in its header's value columns (its unit note is kept as the note).
            title_line = not cells[0] and len(values) == 1 and heads_next and not any(ch.isdigit() for ch in values[0])
            title = (values[0][:m.start() - line.index(values[0])] if m else values[0]).strip(" ,;:") if title_line else ""
            title = title if sum(ch.isalpha() for ch in title) >= 3 else ""
            if m and not any(re.search(r"\d", c) for c in cells):
                titled = title or titled
                continue  # "| (in thousands, except per membership)": the table's unit note, kept as its note
            if not cells[0] and len(cells) > 2 and re.search(r"[A-Za-z]", cells[1]):
                line = " | ".join(cells[1:])  # "| Total U.S. | 1,929": a label set one column in is still the label
            elif not cells[0] and not any(ch.isalpha() for ch in line):
                continue  # "| 30": figures under no label (a page number, a label's wrapped line) say nothing
            above = []
            titled = title or titled
            units.append(QuotableUnit(source, "row", line, pos, "\n".join(header_lines), note, group=group,
                                      caption=caption, lead=lead, header_title=header_title))
            group = "" if _closes_group(line, group) else group
        else:
            header_closed = True
            lead_in = line if line.endswith(":") else ""  # "Presented in the table below is ...:"
            if len(line) > 120:  # prose ends the table
                header_lines = []
                group = caption = lead = ""
                above = []
            elif len(line.split()) <= 6 and not line.endswith((".", "!", "?")) and not m:
                # "Operating expenses:" heads the rows below it; "(In millions except par value)" is the unit note.
                group = line.rstrip(":")
                above = (above + [group])[-2:]
            if _item_heading(line) or _capitals_heading(line):
                last_heading = line
                continue  # "Item 1A. Risk Factors", "PART II", "RISKS RELATED TO OUR SUPPLIERS": where, not what
            last_heading = _add_sentences(source, line, pos, units, last_heading)
        pos += 1
    _mark_dollar_tables(units)
    return units


def _whole_sentences(lines: list[str]) -> list[str]:
    """The chunk's lines without the pieces of sentences its edges cut: a chunk can open in the middle of a sentence
    (its first prose starts with a word in lower case) and close before one ends (its last prose has no stop). Such
    a piece says nothing read alone, unless it is a long one cut near its end."""
    lines = list(lines)
    filled = [i for i, line in enumerate(lines) if line.strip()]
    # Only prose at the chunk's very edges: a line between table rows is a row group's heading, however it ends.
    for i in filled:
        line = lines[i].strip()
        row, first = "|" in line, line.split()[0]
        # A sentence's start, a name written in lower case first ("eWidget"), or a note in brackets ("(in millions)").
        if row or not (first[:1].isalpha() and first.islower()):
            break
        ends = sentence_ends(line)
        lines[i] = line[ends[0]:] if ends else ""
        if ends:
            break
    line = lines[filled[-1]].rstrip() if filled else ""
    ends, row = sentence_ends(line), "|" in line
    piece = len(line[ends[-1]:].split()) if ends else len(line.split())
    # A long piece at the end keeps its subject and verb, and most of what it says: it stays.
    heading = not ends and piece <= 5  # a short line alone is a heading, which has no stop
    if 0 < piece <= CUT_PIECE_WORDS and not (row or heading) and not line.endswith(_CLOSING):
        lines[filled[-1]] = line[:ends[-1]] if ends else ""
    return lines


CUT_PIECE_WORDS = 12  # the most words of a sentence cut at a chunk's end that is dropped rather than quoted


_CLOSING = tuple(".!?:;)\"”’")  # what a whole sentence, or a heading's colon, ends with


HEADLINE_MAX_WORDS = 60  # a headline is one sentence; a longer one is a paragraph of its own


def headlines(source: Citation) -> list[QuotableUnit]:
    """The source's headline sentences, in text order: a paragraph of one sentence that leads a longer paragraph
    (or ends the chunk, whose next one holds that paragraph), or an item of a list of such sentences (a summary of
    the risk factors). Each risk factor is headed so, by the one sentence that says it ("Rising input costs could
    reduce our margins.") above the paragraphs that explain it."""
    lines = (source.text or "").splitlines()
    start = 1 if lines and _CHUNK_HEADER.match(lines[0].strip()) else 0
    paragraphs = [line.strip() for line in _whole_sentences(lines[start:]) if line.strip()]
    prose = [not any(ch == "|" for ch in line) for line in paragraphs]  # a table row is no headline nor paragraph
    sizes = [(len(line.split()), len(split_sentences(line))) for line in paragraphs] + [(0, 0)]
    last = len(paragraphs) - 1
    # The paragraph it leads may be the next chunk's: a chunk often ends at a headline (though not a chunk that
    # holds nothing else).
    leads = [(k == last and k > 0) or (k < last and prose[k + 1] and sizes[k + 1][0] > sizes[k][0] and sizes[k + 1][1] > 1)
             or paragraphs[k][:1] in LIST_MARKS  # an item of a list of them, as a risk factor summary sets them out
             for k in range(len(paragraphs))]
    return [QuotableUnit(source, "sentence", line.lstrip(LIST_MARKS + " "), pos) for pos, line in enumerate(paragraphs)
            if prose[pos] and leads[pos] and line.endswith((".", "!", "?")) and sizes[pos][1] == 1
            and 5 <= sizes[pos][0] <= HEADLINE_MAX_WORDS]


def _capitals_heading(line: str) -> bool:
    """A line set in capitals without a figure or a stop: a heading over the text below it, not a statement."""
    letters = [ch for ch in line if ch.isalpha()]
    return (len(letters) > 3 and all(ch.isupper() for ch in letters) and not any(ch.isdigit() for ch in line)
            and not line.endswith((".", "!", "?")))


def _item_heading(line: str) -> bool:
    """An Item or Part heading line with its title, not a longer sentence that opens by naming the Item."""
    return len(line.split()) <= ITEM_HEADING_WORDS and is_heading(line)


LEAD_IN_STATEMENT_WORDS = 8  # the fewest words of a sentence ending in a colon that states an amount


def _add_sentences(source: Citation, line: str, pos: int, units: list[QuotableUnit], last_heading: str) -> str:
    """The line's sentences appended to `units`, each told the one after it (`following`). Returns the heading
    last seen, which a bare "None." after it is quoted with."""
    first_in_line = len(units)
    for sentence in split_sentences(line):
        words, figure = len(sentence.split()), any(ch.isdigit() for ch in sentence)
        # A sentence that states an amount before the list it leads in to ("In the half year it invested $1.2
        # billion, as follows:") is a statement too; one that only dates the table below it is not.
        amount = sentence.endswith(":") and any(n.money or n.scaled for n in parse_numbers(sentence))
        lead_in = sentence.endswith(":") and not (amount and words >= LEAD_IN_STATEMENT_WORDS)
        if lead_in or (words <= 5 and not figure and not sentence.endswith((".", "!", "?"))):
            last_heading = sentence
            continue  # a heading ("Cost of sales:", "Net sales"), not a statement; "None." stays
        if words <= 3 and not figure and sentence.endswith((".", "!", "?")):  # "None." says something only with its heading
            previous = units[-1].text if units and units[-1].kind == "sentence" else last_heading
            if previous:
                if units and units[-1].kind == "sentence" and units[-1].text == previous:
                    units.pop()
                sentence = f"{previous} — {sentence}"
        units.append(QuotableUnit(source, "sentence", sentence, pos))
        last_heading = ""
    for a, b in zip(units[first_in_line:], units[first_in_line + 1:], strict=False):
        a.following = b.text
    return last_heading


def _mark_dollar_tables(units: list[QuotableUnit]) -> None:
    """Mark the rows of each table (a run of rows under one column header) that prints a dollar sign anywhere."""
    for (is_row, _header), run in groupby(units, key=lambda u: (u.kind == "row", u.header)):
        rows = list(run)
        if is_row and any("$" in r.text for r in rows):
            for r in rows:
                r.in_dollars = True
