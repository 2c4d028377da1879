"""The one way text reaches a Streamlit element that renders Markdown.

Streamlit renders Markdown (links, images, HTML-looking text, LaTeX, `:red[...]` directives) not only in
st.markdown and st.caption but in every label, help tooltip, status, progress text, toast, notice, expander and tab
title. Filing text, filing metadata (a registrant name, a ticker, an Item title), upload names, model output and
what the user typed are untrusted; they reach those elements only through here:

    md("Re-indexed **{}**: {:,} chunks", label, n)   app-written template (a literal); str arguments escaped
    plain(name)                                      untrusted text as one literal line
    join(" · ", bits)                                parts escaped unless already `Md`
    download_name(title, ".md")                      a file name with no path or control characters

Each returns `Md`, Markdown the app vouches for; numbers pass through md() untouched. tests/test_safe_text.py
reads ui/ and pages/ and fails when a Markdown-rendering Streamlit parameter gets anything else than a literal, an
`Md` made here (or by ui.text's safe_markdown/safe_inline/code_inline) or a name bound only to those, so the unsafe
way does not pass review. A function parameter annotated `Md` is checked at every call site the same way.
"""

from __future__ import annotations

import re
import string
import unicodedata
from typing import Iterable

from .text import Md, code_inline, safe_inline, safe_markdown, safe_url

__all__ = ["Md", "code", "download_name", "join", "link", "markdown", "md", "plain"]


def plain(text) -> Md:
    """Untrusted text for a label, caption, notice or title: one line, every character shown as typed."""
    return safe_inline(text)


def markdown(text) -> Md:
    """Untrusted multi-line text (an answer, a passage): words, figures and lists render; nothing else does."""
    return text if isinstance(text, Md) else safe_markdown(text, citation_color=None)


def code(text) -> Md:
    """Untrusted text as an inline code span (a path, an id, a command)."""
    return code_inline(text)


def link(text, url) -> Md:
    """A link to a plain https `url` (ui.text.safe_url) with `text` escaped; just the text when the URL is not one."""
    href = safe_url(url)
    return Md(f"[{safe_inline(text)}]({href})") if href else safe_inline(text)


class _EscapingFormatter(string.Formatter):
    """str.format that escapes every field's text unless the value is `Md` or a number."""

    def format_field(self, value, format_spec: str) -> str:
        formatted = format(value, format_spec)
        if isinstance(value, Md) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
            return formatted
        return safe_inline(formatted)

    def convert_field(self, value, conversion):
        # !r / !s turn the value into a plain str first: it is escaped like any other str.
        return value if conversion is None else super().convert_field(value, conversion)


_FORMATTER = _EscapingFormatter()


def md(template: str, /, *args, **kwargs) -> Md:
    """The app's own Markdown `template` (a literal) with its `{}` fields filled in escaped (see the module doc)."""
    return Md(_FORMATTER.vformat(template, args, kwargs))


def join(separator: str, parts: Iterable) -> Md:
    """The parts joined by the app's `separator`, each escaped unless it is already `Md`."""
    return Md(separator.join(safe_inline(p) for p in parts))


_UNSAFE_NAME_CHARS = re.compile(r"[^\w.\-]+")


def download_name(title, suffix: str, fallback: str = "download", limit: int = 80) -> str:
    """A file name for st.download_button from untrusted `title`: letters, digits, '-', '_' and inner dots only
    (no path separator, control character or leading dot), at most `limit` characters before `suffix`."""
    text = unicodedata.normalize("NFKC", str(title or ""))
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")  # control, format, unassigned
    stem = _UNSAFE_NAME_CHARS.sub("-", text).strip("-.")[:limit].rstrip("-.")
    return f"{stem or fallback}{suffix}"
