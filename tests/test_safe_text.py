"""The one escaping path (ui/safe.py)."""

from __future__ import annotations

import re

import pytest

from ui.safe import Md, code, download_name, join, link, markdown, md, plain
from ui.text import WORD_JOINER

PAYLOADS = ("![c](http://payload.invalid/x.png)", "<img src=http://payload.invalid/y.png>", ":red[RED]",
            "[link](javascript:alert(1))", "$x^2$", "**bold** `code` # head | pipe ~~s~~")


def _unescaped(out: str, token: str) -> bool:
    """Whether `token` occurs in `out` with its first character not backslash-escaped."""
    return re.search(r"(?<!\\)" + re.escape(token), out) is not None


# --------------------------------------------------------------------------------------------------------------
# The safe path


@pytest.mark.parametrize("payload", PAYLOADS)
def test_plain_leaves_no_markup_active(payload):
    out = plain(payload)
    assert isinstance(out, Md)
    for token in ("![", "[", "<", ":red[", "$", "*", "`", "#", "|", "~"):
        if token in payload:
            assert not _unescaped(out, token), (token, out)
    assert "http://" not in out, "a URL stays broken so it cannot autolink"
    # Removing the escapes gives the text back (it shows as typed).
    assert out.replace("\\", "").replace(WORD_JOINER, "") == payload.replace("\\", "")


def test_plain_is_one_line_and_keeps_md_as_it_is():
    assert plain("Acme\nWidgets\t Inc.") == "Acme Widgets Inc."
    trusted = md("**{}**", "x")
    assert plain(trusted) is trusted
    assert plain(None) == "" and plain(2024) == "2024"


def test_md_escapes_its_arguments_and_keeps_its_template():
    out = md("Re-indexed **{}**: {:,} chunks, {:.1f} s", ":red[ACME] ![c](http://h/x.png)", 12345, 2.25)
    assert isinstance(out, Md)
    assert out.startswith("Re-indexed **\\:red\\[ACME\\] \\!\\[c\\]")
    assert out.endswith(": 12,345 chunks, 2.2 s")
    assert md("{}", md("**{}**", "a")) == "**a**", "Md arguments are not escaped twice"
    assert md("{name!r}", name="<b>") == "'\\<b\\>'", "a conversion's text is escaped like any str"
    assert md("{}", True) == "True"


def test_md_plus_md_stays_trusted_and_plus_str_does_not():
    assert isinstance(md("a") + md("b"), Md)
    assert type(md("a") + "b") is str and type("a" + md("b")) is str
    assert type(md("abc")[1:]) is str


def test_join_escapes_only_untrusted_parts():
    out = join(" · ", [md("**{}** retrieval", "hybrid"), "$5 :red[x]", 7])
    assert out == "**hybrid** retrieval · \\$5 \\:red\\[x\\] · 7"


def test_link_only_for_plain_https_urls():
    assert link("open [it]", "https://www.sec.gov/a.htm") == "[open \\[it\\]](https://www.sec.gov/a.htm)"
    assert link("open", "javascript:alert(1)") == "open"
    assert link("open", "https://x.example/a) ![i](http://h/y.png") == "open"


def test_markdown_and_code_escape_untrusted_text():
    assert not _unescaped(markdown("a ![c](http://h/x.png)"), "![")
    assert code("a`b") == "`a'b`"


@pytest.mark.parametrize("title, expected", [
    ("../../evil.htm", "evil.htm.md"),
    ("..\\..\\Windows\\evil", "Windows-evil.md"),
    ("Q&A: revenue / margins\x00\x1b[31m?", "Q-A-revenue-margins-31m.md"),
    ("Umsatz für FY2024", "Umsatz-für-FY2024.md"),
    ("...", "conversation.md"),
    ("", "conversation.md"),
])
def test_download_names_have_no_path_or_control_characters(title, expected):
    name = download_name(title, ".md", fallback="conversation")
    assert name == expected
    assert "/" not in name and "\\" not in name and not name.startswith(".")
    assert not any(ord(ch) < 32 for ch in name)


def test_download_name_is_bounded():
    assert len(download_name("x" * 500, ".md")) == 83
