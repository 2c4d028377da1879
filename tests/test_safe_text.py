"""The one escaping path (ui/safe.py) and the scan that keeps every Markdown-rendering Streamlit call on it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.markdown_sinks import ModuleCheck, check_files, md_parameters
from ui.safe import Md, code, download_name, join, link, markdown, md, plain
from ui.text import WORD_JOINER

ROOT = Path(__file__).resolve().parents[1]
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


# --------------------------------------------------------------------------------------------------------------
# The scan


def _findings(source: str) -> list[str]:
    tree = ast.parse(source)
    return [f"{f.call}:{f.param}" for f in ModuleCheck("mod.py", tree, md_parameters({"mod.py": tree})).run().findings]


UNSAFE = {
    "caption f-string": ('import streamlit as st\ndef f(name):\n    st.caption(f"Filed by {name}")', "caption:body"),
    "status label": ('def f(label):\n    with st.status(f"Re-indexing {label}…") as box:\n'
                     '        box.update(label=label)', "status:label"),
    "a status's update": ('def f(label):\n    with st.status("x") as box:\n        box.update(label=label)',
                          "update:label"),
    "progress bar": ('def f(items):\n    bars = {}\n    for i, (p, label) in enumerate(items):\n'
                     '        bars[i] = st.progress(0.0, text="waiting")\n        bars[i].progress(1.0, text=label)',
                     "progress:text"),
    "column button": ('def f(names):\n    cols = st.columns(2)\n    for col, n in zip(cols, names):\n'
                      '        col.button(n)', "button:label"),
    "unpacked columns": ('def f(n):\n    left, right = st.columns(2)\n    right.metric("Name", n)', "metric:value"),
    "help tooltip": ('def f(url):\n    st.selectbox("Model", [], help=f"At {url}")', "selectbox:help"),
    "toast": ("def f(x):\n    st.toast(x)", "toast:body"),
    "expander": ('def f(c):\n    with st.expander(c["title"]):\n        pass', "expander:label"),
    "tabs": ("def f(t):\n    st.tabs(['Read', t])", "tabs:tabs"),
    "str.join of escaped parts": ('def f(bits):\n    st.caption(" · ".join(bits))', "caption:body"),
    "a name bound to untrusted text": ('def f(c):\n    text = c.get("name")\n    st.info(text)', "info:body"),
    "one unsafe binding of several": ('def f(c):\n    text = plain(c)\n    if c:\n        text = c\n'
                                      '    st.info(text)', "info:body"),
    "md with a variable template": ("def f(t, x):\n    st.caption(md(t, x))", "caption:body"),
    "radio options format": ('def f():\n    st.radio("Mode", MODES, format_func=str.capitalize)',
                             "radio:format_func"),
    "download file name": ('def f(c):\n    st.download_button("Export", "", file_name=f"{c}.md")',
                           "download_button:file_name"),
    "own Md parameter": ("def notice(message: Md):\n    pass\ndef f(label):\n    notice(f'Removed {label}')",
                         "notice:message"),
    "raw HTML": ("def f(x):\n    st.html(x)", "html:body"),
    "unsafe_allow_html": ('st.markdown("<b>x</b>", unsafe_allow_html=True)', "unsafe_allow_html:"),
    "write": ("def f(x):\n    st.write('a', x)", "write:*"),
    "dialog title": ("def f(x):\n    st.dialog(x)(print)", "dialog:title"),
    "link button address": ('def f(c):\n    st.link_button("Open", c.get("url"))', "link_button:url"),
    "image address": ("def f(c):\n    st.image(c['logo'])", "image:image"),
    "Md() is no way around": ("def f(x):\n    st.caption(Md(x))", "caption:body"),
    "a stream of untrusted text": ("def f(s):\n    st.write_stream(s)", "write_stream:stream"),
}


@pytest.mark.parametrize("case", sorted(UNSAFE))
def test_scan_flags_untrusted_text_in_markdown_sinks(case):
    source, expected = UNSAFE[case]
    assert expected in _findings(source)


SAFE = [
    'st.caption("Literal **markdown**, no interpolation")',
    'def f(name):\n    st.caption(md("Filed by **{}**", name))',
    'def f(name, n):\n    st.caption(f"{len(n):,} chunks · {plain(name)}" + (code(name) if name else ""))',
    'def f(label):\n    with st.status(md("Re-indexing {}…", label)) as box:\n        box.update(label=plain(label))',
    'def f(bits):\n    st.caption(join(" · ", bits))',
    'def f(c):\n    text = plain(c)\n    if c:\n        text = md("**{}**", c)\n    st.info(text)',
    'LABELS = {"a": "Company"}\ndef f():\n    st.text_input(LABELS["a"])',
    'YEARS, QUARTERS = "Fiscal years", "Quarters"\ndef f():\n    st.radio("Periods", [YEARS, QUARTERS])',
    'def f():\n    st.radio("Mode", MODES, format_func=lambda m: plain(m.capitalize()))',
    'def f(c):\n    st.download_button("Export", "", file_name=download_name(c, ".md"))',
    "def notice(message: Md):\n    st.success(message)\ndef f(label):\n    notice(md('Removed {}', label))",
    "from .text import PASSAGE_CSS\ndef f(t):\n    st.html(PASSAGE_CSS + highlight_html('', t, ''))",
    "def f(s):\n    st.write_stream(escaped_stream(s))",
    'def f(c):\n    st.link_button("Open", safe_url(c.get("url")))',
    'def f(x):\n    log.warning(f"not a Streamlit call: {x}")\n    d = {}\n    d.update(label=x)',
]


@pytest.mark.parametrize("source", SAFE)
def test_scan_passes_the_safe_path(source):
    assert _findings(source) == []


def test_every_markdown_rendering_call_in_the_app_takes_the_safe_path():
    paths = sorted([*ROOT.glob("ui/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"])
    findings, checked = check_files(paths, ROOT)
    assert checked > 150, f"only {checked} Streamlit calls were recognised: the scan has lost track of the app"
    assert not findings, ("Untrusted text may reach Markdown; build it with ui.safe (md, plain, join, code, link, "
                          "download_name):\n" + "\n".join(map(str, findings)))
