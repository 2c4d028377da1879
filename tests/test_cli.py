"""The command line as a terminal user meets it, run in-process against a tiny index of two made-up 10-Ks:
rendered answers, gap-free citation numbers, one score scale, quiet model loading, and failures that say so."""

from __future__ import annotations

import json
import re

import pytest

from rag.__main__ import main
from rag.answer.refusals import check_refusal
from rag.config import OFFLINE_EMBED_MODEL, get_settings
from rag.index import IndexStore
from rag.schema import QuestionPlan
from rag.terminal import AnswerPrinter, clean_text, render_inline

from .fake_ollama import started_fake_ollama
from .filings import ACME, BOLT, write_filing

fake_ollama = pytest.fixture(started_fake_ollama, name="fake_ollama")

QUESTION = "What was ACME's revenue in fiscal 2024?"


@pytest.fixture(scope="module")
def storage(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    store = IndexStore(get_settings(storage_dir=root / "storage", data_dir=root / "data"))
    paths = [write_filing(root / "in", "acme.htm", **ACME), write_filing(root / "in", "bolt.htm", **BOLT)]
    report = store.add(paths)
    assert not report.errors, report.rows
    return str(root / "storage")


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _split(out: str) -> tuple[str, list[str]]:
    """(the answer, the source lines) of `rag ask` output."""
    answer, _, sources = out.partition("\nSources:\n")
    return answer, [line for line in sources.splitlines() if re.match(r"\s+\[\d+\]", line)]


def test_ask_renders_plain_text_and_numbers_sources_without_gaps(storage, capsys):
    code, out, err = _run(capsys, "ask", QUESTION, "--storage", storage, "--no-llm")
    assert code == 0, err
    assert "**" not in out and "`" not in out and "\x1b" not in out  # captured output is not a terminal
    answer, sources = _split(out)
    used = list(dict.fromkeys(int(n) for n in re.findall(r"\[(\d+)\]", answer)))
    assert used == list(range(1, len(used) + 1)), answer  # first use order, no gaps
    listed = [int(re.match(r"\s+\[(\d+)\]", line).group(1)) for line in sources]
    assert listed == list(range(1, len(listed) + 1))
    assert "score" not in out and "1.000" not in out

    code, raw, _ = _run(capsys, "ask", QUESTION, "--storage", storage, "--no-llm", "--json")
    result = json.loads(raw)
    engine = [c["number"] for c in result["citations"]]
    assert len(used) == len(engine)
    # The mapping is exact: the n-th source listed is the engine's source first named n-th in its own answer.
    first_use = list(dict.fromkeys(int(n) for n in re.findall(r"\[(\d+)\]", result["answer"])))
    by_number = {c["number"]: c for c in result["citations"]}
    for line, number in zip(sources, first_use):
        c = by_number[number]
        assert f"{c['ticker']} {c['form']} FY{c['fiscal_year']} {c['section']} p. {c['page_start']}" in line
        assert ("exact XBRL figure" in line) == (c["kind"] == "fact")
        assert ("passages retrieved" in line) == (c["kind"] != "fact")
    assert any(c["kind"] == "fact" for c in result["citations"]), "the test needs an XBRL figure beside passages"


def test_streamed_model_answer_is_rendered_and_renumbered(storage, capsys, monkeypatch, fake_ollama):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    monkeypatch.setenv("RAG_LLM_MODEL", "test-model")
    fake_ollama.reply = "**Revenue** was `$391,035` million [3], up from $383,285 million [1][3]."
    code, out, err = _run(capsys, "ask", QUESTION, "--storage", storage)
    assert code == 0, err
    answer, sources = _split(out)
    # The exact XBRL figure leads, citing the fact as [1]; the model's [3] (a passage) becomes [2] in order of use.
    lead, _, model_text = answer.strip().partition("\n\n")
    assert lead.endswith("$391,035 million [1]")
    assert model_text == "Revenue was $391,035 million [2], up from $383,285 million [1][2]."
    code, raw, _ = _run(capsys, "ask", QUESTION, "--storage", storage, "--json")
    report = json.loads(raw)
    engine = {c["number"]: c for c in report["citations"]}
    assert sorted(engine) == [1, 3]  # --json keeps the engine's numbers
    passages = sorted(c["number"] for c in report["sources"] if c["kind"] != "fact")
    for line, number in zip(sources, (1, 3)):  # the exact figure's fact first: the answer leads with it
        assert f"{engine[number]['section']} p. {engine[number]['page_start']}" in line
        if engine[number]["kind"] == "fact":
            assert "exact XBRL figure" in line
        else:  # a passage's rank is its place in retrieval
            assert f"{ordinal_of(passages.index(number) + 1)} of " in line


def ordinal_of(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def test_ask_on_a_terminal_uses_ansi_bold_not_markdown(storage, capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    code, out, _ = _run(capsys, "ask", QUESTION, "--storage", storage, "--no-llm")
    assert code == 0
    assert "\x1b[1m" in out and "**" not in out and "`" not in out


def test_empty_question_exits_2_with_a_message(capsys):
    for question in ("", "   "):
        code, out, err = _run(capsys, "ask", question)
        assert code == 2 and out == ""
        assert "question is empty" in err


def test_failures_exit_non_zero_without_done_in(storage, tmp_path, capsys):
    code, _, err = _run(capsys, "index", str(tmp_path / "missing.htm"), "--storage", str(tmp_path / "s"))
    assert code != 0 and "error:" in err and "done in" not in err
    code, out, err = _run(capsys, "ask", QUESTION, "--storage", str(tmp_path / "empty"))
    assert code == 1 and out == ""
    assert "python -m rag index PATH" in err and "done in" not in err
    code, _, err = _run(capsys, "eval", "--questions", str(tmp_path / "none.jsonl"), "--storage", storage)
    assert code == 1 and "none.jsonl" in err and "Traceback" not in err
    code, _, err = _run(capsys, "eval", "--questions", str(tmp_path / "none.jsonl"), "--storage", str(tmp_path / "s"))
    assert code == 1 and "index is empty" in err  # a command's own stop message, returned rather than raised


def test_messages_point_a_cli_user_at_commands_and_an_app_user_at_the_library(storage, capsys):
    code, out, _ = _run(capsys, "ask", "What does Frobozz Inc sell?", "--storage", storage, "--no-llm")
    assert code == 0
    assert "python -m rag download TICKER" in out and "Library" not in out
    plan = QuestionPlan(question="What does Frobozz sell?", unknown_companies=["Frobozz"])
    assert "Library page" in check_refusal(plan.question, plan).message
    assert "python -m rag index PATH" in check_refusal(plan.question, plan, audience="cli").message


def test_model_load_and_long_texts_print_no_library_noise(capfd):
    from transformers.utils import logging as transformers_logging

    from rag import embedding

    transformers_logging.enable_progress_bar()
    transformers_logging.set_verbosity_warning()
    embedding._load_embed_model.cache_clear()
    tokenizer = embedding.get_tokenizer(OFFLINE_EMBED_MODEL)
    transformers_logging.set_verbosity_warning()  # the tokenizer's own flag must keep its warning away
    tokenizer("revenue " * 2000, add_special_tokens=False)
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "Token indices sequence length" not in err, err


def test_stream_is_renumbered_across_pieces_and_stripped_of_escapes(capsys):
    import sys

    printer = AnswerPrinter(sys.stdout, style=False)
    for piece in ["**Total** `9` [", "9] a\x1b[31m red\x1b[0m\n\n\n[4][9", "] b\x1b]0;title\x07 c\r\n\n"]:
        printer.feed(piece)
    printer.close()
    assert capsys.readouterr().out == "Total 9 [1] a red\n\n[2][1] b c\n"
    assert printer.numbers.renumber_known("Removed citation [12]; see [4]") == "Removed citation [12]; see [2]"


def test_markdown_keeps_words_and_figures():
    assert render_inline(r"**Revenue** was *$391,035* million \* in `FY2024` ([SEC](https://sec.gov))",
                         style=False) == "Revenue was $391,035 million * in FY2024 (SEC (https://sec.gov))"
    assert render_inline("3 * 4 * 5 and file_name_here", style=False) == "3 * 4 * 5 and file_name_here"
    assert render_inline("**up 2%**", style=True) == "\x1b[1mup 2%\x1b[22m"
    assert clean_text("a\u202eb\x00c\td") == "abc\td"


def test_file_names_reach_the_terminal_shown_not_acted_on(tmp_path, capsys):
    """A file's name may hold an escape sequence (which would colour the line) or a newline (which would split
    it): the progress lines and the report show both as written, each line naming the file whole."""
    path = write_filing(tmp_path / "in", "acme\x1b[31mred\nnext.htm", **ACME)
    code, out, err = _run(capsys, "index", str(path), "--storage", str(tmp_path / "storage"))
    assert code == 0, err
    assert "\x1b" not in out + err
    shown = "acme\\x1b[31mred\\nnext.htm"
    progress = [line for line in err.splitlines() if "%]" in line]
    assert len(progress) >= 3 and all(f"] {shown}" in line for line in progress), err
    assert [line for line in out.splitlines() if "indexed" in line][0].endswith(shown), out


def test_a_typed_ticker_that_is_no_ticker_is_refused_before_anything_is_indexed(tmp_path, capsys):
    filing = write_filing(tmp_path / "in", "acme.htm", **ACME)
    code = main(["index", str(filing), "--ticker", "![x](http://h/x.png)", "--storage", str(tmp_path / "s")])
    assert code == 2
    assert "is not a ticker" in capsys.readouterr().err
    assert not (tmp_path / "s" / "index").exists() or not IndexStore(
        get_settings(storage_dir=tmp_path / "s")).list_filings()


def test_an_uploaded_filing_with_a_typed_ticker_that_is_no_ticker_is_refused(tmp_path):
    from rag.edgar import EdgarError
    from rag.edgar.local import add_local_file

    filing = write_filing(tmp_path / "in", "acme.htm", **ACME)
    with pytest.raises(EdgarError, match="is not a ticker"):
        add_local_file(filing, settings=get_settings(data_dir=tmp_path / "data"), ticker="<b>AC</b>")
    assert not (tmp_path / "data" / "uploads").exists() or not any((tmp_path / "data" / "uploads").iterdir())


def _arguments(parser, path: str = "python -m rag"):
    """(where, argument) for every option and positional of `parser` and of its subcommands, all the way down."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            listed = {choice.dest: choice for choice in action._choices_actions}  # each subcommand's own help line
            for name, sub in action.choices.items():
                yield path, listed.get(name) or argparse.Action([name], dest=name)
                yield from _arguments(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_command_option_and_argument_has_help():
    """`python -m rag <command> --help` explains everything it accepts: no option, positional or subcommand is listed
    bare."""
    import argparse

    from rag.__main__ import build_parser

    seen = list(_arguments(build_parser()))
    bare = [f"{where}: {'/'.join(a.option_strings) or a.dest}" for where, a in seen
            if a.help is None or a.help == argparse.SUPPRESS or not str(a.help).strip()]
    assert len(seen) > 60  # the walk reached every subcommand's arguments
    assert not bare, "without help text:\n" + "\n".join(bare)


def test_facts_finds_a_figure_by_its_usual_concept_name_when_the_filer_tags_another(tmp_path, capsys):
    """The README's `rag facts AAPL --fy 2024 --concept Revenues`: Apple tags its total net sales
    RevenueFromContractWithCustomerExcludingAssessedTax, never us-gaap:Revenues, so a plain search of concept names
    found nothing and the command exited 1. The usual name, with its taxonomy prefix or without, now reaches the
    figure as this filer tags it (the income statement's Total net sales: 391,035 for fiscal 2024, 383,285 for 2023)."""
    from rag.facts import FactStore

    from .filings import SHARED, store_facts

    path = SHARED / "corpus" / "filings" / "AAPL" / "aapl-20240928.htm"
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared corpus (../shared beside the project) is needed")
    settings = get_settings(storage_dir=tmp_path / "storage")
    store_facts(FactStore.for_settings(settings), IndexStore(settings).chunker(), path, {})
    storage = str(tmp_path / "storage")
    for name in ("Revenues", "us-gaap:Revenues"):
        code, out, err = _run(capsys, "facts", "AAPL", "--fy", "2024", "--concept", name, "--storage", storage)
        assert code == 0, out + err
        assert "is tagged here as us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax" in out
        first = next(line for line in out.splitlines() if line.startswith("  us-gaap:"))
        assert "$391,035 million" in first and "2023-10-01 to 2024-09-28" in first
        assert "$383,285 million" in out
    # A name that is in the filing is read as before, and one that names nothing still exits 1.
    code, out, _ = _run(capsys, "facts", "AAPL", "--fy", "2024", "--concept", "GrossProfit", "--storage", storage)
    assert code == 0 and "Facts matching 'GrossProfit'" in out and "$180,683 million" in out
    code, out, _ = _run(capsys, "facts", "AAPL", "--fy", "2024", "--concept", "NoSuchConcept", "--storage", storage)
    assert code == 1 and "Facts matching 'NoSuchConcept': 0" in out


def test_every_readme_example_is_a_command_the_cli_accepts():
    """The README's `python -m rag ...` lines, as written, parse: a renamed option or a made-up syntax such as
    `[--split tune|blind]` fails here rather than in a newcomer's terminal."""
    import shlex
    from pathlib import Path

    from rag.__main__ import build_parser

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    lines = [line.strip() for line in readme.splitlines() if line.strip().startswith("python -m rag ")]
    assert len(lines) >= 15, lines
    commands = set()
    for line in lines:
        argv = shlex.split(line, comments=True)[3:]
        try:
            args = build_parser().parse_args(argv)
        except SystemExit:
            pytest.fail(f"the CLI refuses the README's example: {line}")
        commands.add(args.command)
    assert {"index", "list", "ask", "facts", "eval", "bench", "remove"} <= commands


def test_ask_with_history_plans_the_follow_up_against_it(storage, capsys):
    first = "What were ACME's total net sales?"
    code, raw, err = _run(capsys, "ask", "And BOLT?", "--history", first, "--storage", storage, "--no-llm", "--json")
    assert code == 0, err
    result = json.loads(raw)
    assert "96,773" in result["answer"] and "391,035" not in result["answer"]
    assert result["detected"]["carried"] == ["total revenue"]
    code, out, err = _run(capsys, "ask", "And BOLT?", "--history", first, "--storage", storage, "--no-llm")
    assert code == 0 and "96,773" in out
    assert "from the conversation: total revenue" in err


def test_chat_keeps_the_conversation_over_piped_questions(storage, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("What were ACME's total net sales?\n\nAnd BOLT?\n"))
    code, out, err = _run(capsys, "chat", "--storage", storage, "--no-llm", "--json")
    assert code == 0, err
    first, second = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert "391,035" in first["answer"] and first["detected"]["carried"] == []
    assert "96,773" in second["answer"] and second["detected"]["carried"] == ["total revenue"]
    monkeypatch.setattr("sys.stdin", io.StringIO("What were ACME's total net sales?\nAnd BOLT?\n"))
    code, out, err = _run(capsys, "chat", "--storage", storage, "--no-llm")
    assert code == 0, err
    assert out.count("Q: ") == 2 and "Q: And BOLT?" in out
    assert out.index("391,035") < out.index("Q: And BOLT?") < out.index("96,773")
