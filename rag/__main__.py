"""The command line: python -m rag download|index|list|edit|remove|ask|eval|bench|facts|census|migrate."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Callable

from .companies import TICKER_FORM, checked_ticker
from .config import EMBED_BACKENDS, get_settings
from .schema import period_label
from .terminal import (
    AnswerPrinter,
    WaitNotice,
    clean_text,
    number_sources,
    shown_name,
    source_lines,
    stop_on_interrupt,
    wants_style,
)

EMPTY_INDEX = "The index is empty: run `python -m rag download TICKER` or `python -m rag index PATH`."


def _progress(name: str, stage: str, fraction: float) -> None:
    print(f"  [{fraction * 100:5.1f}%] {shown_name(name)}: {shown_name(stage)}", file=sys.stderr, flush=True)


def _files_progress(paths) -> Callable[[str, str, float], None]:
    """Progress that also says which file of how many ("2 of 29") for the files PATHs name."""
    from .index import filing_files

    try:
        order = {Path(p).name: i for i, p in enumerate(filing_files(paths), start=1)}
    except (FileNotFoundError, ValueError):
        return _progress  # the store reports the missing path (or the FIFO) itself

    def progress(name: str, stage: str, fraction: float) -> None:
        position = order.get(Path(name).name)
        _progress(f"{name} ({position} of {len(order)})" if position else name, stage, fraction)

    return progress


def _settings(args):
    return get_settings(storage_dir=getattr(args, "storage", None), data_dir=getattr(args, "data", None),
                        fusion=getattr(args, "fusion", None), fusion_weights=getattr(args, "fusion_weights", None),
                        generated_queries=getattr(args, "generated_queries", None), audience="cli")


def _writer(settings):
    """The index store of a command that writes: a wait for another writer's lock is told on stderr."""
    from .index import open_store

    return open_store(settings, on_lock_wait=lambda message: print(clean_text(message), file=sys.stderr, flush=True))


def _fail(message: str, code: int = 1) -> int:
    print(f"error: {clean_text(message)}", file=sys.stderr)
    return code


def _print_report(report) -> None:
    for row in report.rows:
        extra = f"  {row.get('error')}" if row.get("error") else ""
        print(shown_name(f"{row['status']:>8}  {row.get('chunks', 0):>5} chunks  {row['file']}{extra}"))
        for note in row.get("notes") or []:
            print(shown_name(f"note: {Path(row['file']).name}: {note}"), file=sys.stderr)
    if report.errors:
        others = len(report.rows) - len(report.errors)
        print(f"{len(report.errors)} of {len(report.rows)} file(s) not indexed"
              + (f"; the other {others} were." if others else "."), file=sys.stderr)


def cmd_download(args) -> int:
    from .edgar import EdgarError, download_filings

    settings = _settings(args)
    years = _parse_years(args.years) if args.years else None
    try:
        outcomes = download_filings(
            args.tickers, form=args.form, limit=args.limit, fiscal_years=years, settings=settings,
            progress=lambda t, msg, frac: _progress(t, msg, frac),
        )
    except EdgarError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ok = [o.record for o in outcomes if o.record is not None]
    for outcome in outcomes:
        if outcome.error:
            print(shown_name(f"failed  {outcome.ticker}: {outcome.error}"), file=sys.stderr)
    if not ok:
        print("nothing was downloaded", file=sys.stderr)
        return 1
    if args.no_index:
        for record in ok:
            print(shown_name(f"downloaded  {record.ticker} {record.form} "
                             f"{period_label(record.fiscal_year, record.fiscal_period)}  {record.path}"))
        return 0
    from .index import IndexError_

    try:
        report = _writer(settings).add([r.path for r in ok], progress=_files_progress([r.path for r in ok]))
    except IndexError_ as exc:  # busy, or storage not writable: the downloads stay on disk for the next run
        return _fail(str(exc), 2)
    _print_report(report)
    return 0 if len(ok) == len(outcomes) and not report.errors else 1


def _parse_years(raw: str) -> list[int]:
    years: list[int] = []
    for part in raw.split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-", 1)
            years.extend(range(int(a), int(b) + 1))
        elif part:
            years.append(int(part))
    return years


def cmd_index(args) -> int:
    from .index import IndexError_, PathRefused

    if args.ticker and checked_ticker(args.ticker) is None:
        return _fail(f"{shown_name(args.ticker)!s} is not a ticker: {TICKER_FORM}", 2)
    overrides = {"ticker": args.ticker, "company": args.company, "form": args.form, "fiscal_year": args.fiscal_year}
    try:
        report = _writer(_settings(args)).add(args.paths, overrides=overrides, progress=_files_progress(args.paths))
    except (IndexError_, PathRefused, FileNotFoundError) as exc:  # busy, storage not writable, no such file
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _print_report(report)
    return 1 if report.errors else 0


def cmd_list(args) -> int:
    from .index import fiscal_period_of, open_store

    filings = open_store(_settings(args)).list_filings()
    if args.json:
        print(json.dumps(filings, indent=1))
        return 0
    if not filings:
        print(EMPTY_INDEX)
        return 0
    print(f"{'ticker':<7} {'form':<6} {'FY':<5} {'period':<6} {'chunks':>6}  {'ends':<10}  {'doc id':<22} company")
    for f in filings:
        print(shown_name(
            f"{f.get('ticker') or '-':<7} {f.get('form') or '-':<6} {f.get('fiscal_year') or '-':<5} "
            f"{fiscal_period_of(f) or '-':<6} {f.get('chunks', 0):>6}  {f.get('period_end') or '-':<10}  "
            f"{f['doc_id']:<22} {f.get('company') or ''}"
        ))
    return 0


def cmd_jobs(args) -> int:
    """list the indexing jobs every process has run on team mode's database (RAG_DATABASE_URL), newest first"""
    from .job_records import JobRecords
    from .jobs import UNFINISHED

    settings = _settings(args)
    if not settings.served:
        print("Indexing jobs are kept in the database in team mode only (RAG_DATABASE_URL); without it the app "
              "shows its own jobs in the sidebar and `rag index` prints its progress.", file=sys.stderr)
        return 2
    jobs = JobRecords(settings.database_url, UNFINISHED).recent(args.limit)
    if args.json:
        print(json.dumps(jobs, indent=1, default=str))
        return 0
    if not jobs:
        print("No indexing jobs are recorded yet.")
        return 0
    for job in jobs:
        progress = f" {job['chunks_done']}/{job['chunks_total']} chunks" if job["state"] == "embedding" else ""
        detail = f"  {job['detail']}" if job["detail"] else ""
        print(shown_name(f"{job['submitted_at']:%Y-%m-%d %H:%M}  {job['state']:<11}{progress}  {job['label']}"
                         f"{detail}  ({job['process']})"))
    return 0


def cmd_edit(args) -> int:
    """correct a filing's company, ticker, form, fiscal year or period (metadata only: nothing is re-embedded)"""
    from .index import IndexBusy, IndexError_, InvalidCorrection

    changes = {"ticker": args.ticker, "company": args.company, "form": args.form, "fiscal_year": args.fiscal_year,
               "fiscal_period": args.period}
    store = _writer(_settings(args))
    before = next((f for f in store.list_filings() if f.get("doc_id") == args.doc_id), None)
    try:
        after = store.update_filing(args.doc_id, changes)
    except InvalidCorrection as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    except (IndexBusy, IndexError_) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    changed = [k for k in ("company", "ticker", "form", "fiscal_year", "fiscal_period")
               if (before or {}).get(k) != after.get(k)]
    if not changed:
        print(f"{args.doc_id}: nothing to change")
        return 0
    for key in changed:
        print(f"{key:<13} {(before or {}).get(key) or '-'} -> {after.get(key)}")
    print(f"updated {args.doc_id} (metadata only: nothing was re-embedded)")
    return 0


def cmd_remove(args) -> int:
    from .index import IndexError_

    try:
        removed = _writer(_settings(args)).remove(args.keys)
    except IndexError_ as exc:  # busy, or storage not writable (full, read-only): nothing was removed
        return _fail(str(exc), 2)
    if not removed:
        print("no indexed filing matches " + ", ".join(args.keys), file=sys.stderr)
        return 1
    for doc_id in removed:
        print(f"removed {doc_id}")
    return 0


def _filters(args):
    from .schema import Filters

    return Filters(
        tickers=[t.upper() for t in (getattr(args, "ticker", None) or [])],
        fiscal_years=[int(y) for y in (getattr(args, "fy", None) or [])],
        forms=[f.upper() for f in (getattr(args, "form", None) or [])],
        fiscal_periods=list(args.period or []),
    )


def cmd_ask(args) -> int:
    from .engine import Engine

    if not args.question.strip():
        return _fail('the question is empty: python -m rag ask "a question about the indexed filings"', 2)
    engine = Engine(_settings(args))
    if not engine.store.list_filings():
        return _fail(EMPTY_INDEX)
    _print_answer(engine, args, args.question, list(args.history or []))
    return 0


def cmd_chat(args) -> int:
    """A conversation: one question a line from stdin, each planned against the ones before it; the model and the
    index load once. Ends at end of input (Ctrl-D)."""
    from .engine import Engine

    engine = Engine(_settings(args))
    if not engine.store.list_filings():
        return _fail(EMPTY_INDEX)
    interactive = bool(getattr(sys.stdin, "isatty", lambda: False)())
    history: list[str] = list(args.history or [])
    while True:
        if interactive:
            print("> ", end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline()
        if not line:
            return 0
        question = line.strip()
        if not question:
            continue
        if not args.json:
            print(f"Q: {question}")
        _print_answer(engine, args, question, history)
        history.append(question)
        if not args.json:
            print()


def _print_answer(engine, args, question: str, history: list[str]) -> None:
    """Ask the question within its conversation and print the answer (or, with --json, its whole result)."""
    stream = engine.ask_stream(
        question, mode=args.mode, top_k=args.top_k, filters=_filters(args), use_llm=not args.no_llm,
        history=history or None,
    )
    if args.json:  # the engine's own numbers and scores: scripts rely on them
        for _ in _answer_pieces(stream):
            pass
        print(json.dumps(stream.result.to_dict(), indent=None if args.command == "chat" else 1, ensure_ascii=False))
        return
    style = wants_style(sys.stdout)
    printer = AnswerPrinter(sys.stdout, style)
    for piece in _answer_pieces(stream):
        printer.feed(piece)
    printer.close()
    carried = stream.result.detected.get("carried")
    if carried:
        print(clean_text(f"from the conversation: {' · '.join(carried)}"), file=sys.stderr)
    _print_sources(stream.result, printer, style)


def _answer_pieces(stream):
    """The answer's text pieces, while stderr says how long the model has kept it waiting; the first Ctrl-C stops
    waiting (the answer then comes from the filings) rather than ending the command."""
    notice = WaitNotice(sys.stderr, live=bool(getattr(sys.stderr, "isatty", lambda: False)()))

    def stopping() -> None:
        notice.clear()
        print("stopping the model (Ctrl-C again quits)", file=sys.stderr, flush=True)

    with stop_on_interrupt(stream, stopping) as can_stop:
        notice.hint = "Ctrl-C answers from the filings" if can_stop else ""
        for piece in stream:
            if piece:
                notice.clear()
                yield piece
            else:
                notice.show(stream.waiting)
        notice.clear()


def _print_sources(result, printer: AnswerPrinter, style: bool) -> None:
    """Notes to stderr, then the sources under the numbers the printed answer gave them."""
    number_sources(result, printer.numbers)  # first: a warning may name an uncited source
    for query in result.generated_queries:
        print(clean_text(f"also searched: {query}"), file=sys.stderr)
    for warning in result.warnings:
        print(clean_text(f"warning: {printer.numbers.renumber_known(warning)}"), file=sys.stderr)
    lines = source_lines(result, printer.numbers, style)
    if lines:
        print()
        print("\n".join(lines))


def cmd_eval(args) -> int:
    from . import eval as evaluation

    settings = _settings(args)
    if args.financebench:
        report = evaluation.run_financebench(
            Path(args.financebench), settings, mode=args.mode, top_k=args.top_k, progress=_progress,
            use_analysis=not args.no_analysis, split=args.split,
        )
    else:
        if args.llm:  # the model's figures are asked for: without a model they would be the extractive path's
            from .answer import ollama_status

            status = ollama_status(settings)
            if not (status.reachable and status.model_available):
                return _fail(f"--llm: {status.message}")
        report = evaluation.run_questions(
            Path(args.questions), settings, mode=args.mode, top_k=args.top_k, use_llm=not args.no_llm,
            use_analysis=not args.no_analysis, split=args.split, filters=_filters(args),
            use_history=not args.no_history, ids=args.id, kinds=args.kind,
            progress=_eval_progress(args.json) if not args.no_llm else None,
        )
    evaluation.print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, ensure_ascii=False))
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


def _eval_progress(json_path: str | None):
    """One line per question on stderr while a model answers (minutes each on a CPU); with --json, each row is also
    appended to JSON_PATH.rows.jsonl as it is scored, so a run stopped early keeps what it measured."""
    rows_path = Path(json_path + ".rows.jsonl") if json_path else None
    if rows_path is not None:
        rows_path.write_text("")

    def progress(row: dict) -> None:
        by = "model" if row.get("llm_answered") else "extractive"
        first = row.get("first_token_s")
        print(f"  {row['id']}: {by}, correct={row['answer_correct']}, first token "
              f"{'-' if first is None else f'{first:.1f} s'}, prompt tokens {row.get('prompt_tokens') or '-'}",
              file=sys.stderr, flush=True)
        if rows_path is not None:
            with open(rows_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    return progress


def cmd_bench(args) -> int:
    from . import bench

    if args.what == "scale":
        from .scale_bench import bench_scale

        settings = _settings(args)
        backend = (args.backend or ["postgres" if settings.served else "embedded"])[0]
        if backend not in STORE_BACKENDS:
            return _fail(f"bench scale --backend is {' or '.join(STORE_BACKENDS)}, not {backend!r}", 2)
        return bench_scale(settings, backend, args.chunks)
    if args.backend and set(args.backend) & set(STORE_BACKENDS):
        return _fail(f"--backend {'/'.join(STORE_BACKENDS)} is for bench scale; here it names an embedding backend", 2)
    if args.what == "load":
        from .load_bench import bench_load

        return bench_load(args.paths, _settings(args), sessions=args.sessions, per_session=args.per_session,
                          time_limit=args.time_limit, use_llm=args.llm)
    if not args.paths and not (args.what == "index" and args.synthetic_mb):
        what = ("question files (.jsonl) to time" if args.what in ("retrieve", "answer")
                else f"files or folders to {args.what}")
        return _fail(f"give {what}: python -m rag bench {args.what} PATH ...", 2)
    if args.what == "index":
        return bench.bench_index(args.paths, _settings(args), args.backend, synthetic_mb=args.synthetic_mb)
    if args.what == "embed":
        return bench.bench_embed(args.paths, _settings(args), args.backend, rounds=args.rounds)
    from .index import open_store

    settings = _settings(args)
    if args.backend:
        settings = settings.with_overrides(embed_backend=args.backend[0])
    if not open_store(settings).list_filings():
        return _fail(EMPTY_INDEX)
    if args.what == "answer":
        return bench.bench_answer(args.paths, settings, mode=args.mode, top_k=args.top_k, filters=_filters(args),
                                  limit=args.limit)
    return bench.bench_retrieve(args.paths, settings, mode=args.mode, top_k=args.top_k, filters=_filters(args))


def cmd_census(args) -> int:
    """Prints the engine's hand-written language rules per module and in all, beside the committed ceiling."""
    from .census import KINDS, ceiling, census, report, totals

    per_module = census()
    print(report(per_module, top=args.top))
    whole, most = totals(per_module), ceiling()
    over = [kind for kind in KINDS if getattr(whole, kind) > most[kind]]
    if over:
        return _fail(f"above the ceiling in rag/data/census_ceiling.json: {', '.join(over)}")
    return 0


def cmd_migrate(args) -> int:
    """Copy the embedded store (the --storage folder) into team mode's PostgreSQL; running it again is harmless."""
    from .conversations import StoreUnavailable
    from .database import DatabaseUnavailable, redacted
    from .facts import FactStoreUnavailable
    from .index import IndexError_
    from .migrate import migrate

    lines = {
        "index": "index: {filings} filings copied with their vectors, {present} already there",
        "facts": "facts: {filings} filings, {facts} facts copied",
        "conversations": "conversations: {copied} copied with {messages} messages, {present} already there",
    }

    def report(name: str, counts: dict) -> None:
        print(lines[name].format(**counts) if name in lines else f"{name}: {counts}")

    settings = _settings(args)
    print(f"copying {settings.storage_dir} into {redacted(args.to)}", file=sys.stderr)
    try:
        migrate(settings, args.to, report=report)
    except DatabaseUnavailable as exc:  # its own advice is about RAG_DATABASE_URL; here the address is --to's
        return _fail(f"cannot copy into {redacted(args.to)}: {exc.detail}. Check that PostgreSQL runs there and "
                     "that the address (user, password, host, port, database) is right; nothing was copied.")
    except (IndexError_, FactStoreUnavailable, StoreUnavailable) as exc:
        return _fail(f"the copy stopped: {exc} What was copied stays; running the command again finishes it.")
    return 0


def cmd_facts(args) -> int:
    from .facts import print_facts

    return print_facts(args.ticker, _settings(args), fiscal_year=args.fy, concept=args.concept)


def _edit_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("doc_id", help="the filing's doc id (accession), as `list` shows it")
    p.add_argument("--ticker", help=f"the company's ticker: {TICKER_FORM}")
    p.add_argument("--company", help="the company's name as it should be shown")
    p.add_argument("--form", help="10-K, 10-Q, 10-K/A, ...")
    p.add_argument("--fiscal-year", help="the company's own fiscal year label, e.g. 2025")
    p.add_argument("--period", help="Q1, Q2, Q3 or FY")
    p.set_defaults(func=cmd_edit)


def _common(p):
    p.add_argument("--storage", help="storage folder (default: RAG_STORAGE_DIR or ./storage)")
    p.add_argument("--data", help="data folder for downloads (default: RAG_DATA_DIR or ./data)")
    return p


def _period(p):
    p.add_argument("--period", action="append", choices=["Q1", "Q2", "Q3", "FY"],
                   help="only filings of this fiscal period (repeatable): a 10-Q's quarter, or FY for annual reports")
    return p


def _fusion(p):
    p.add_argument("--fusion", choices=["rrf", "relative"],
                   help="hybrid fusion: reciprocal rank (default, RAG_FUSION) or relative score")
    p.add_argument("--fusion-weights", help="relative-score weights 'dense,keyword', e.g. 0.6,0.4")
    p.add_argument("--generated-queries", type=int, metavar="N",
                   help="Ollama writes N extra search queries per question, fused with it "
                        "(default RAG_GENERATED_QUERIES, 0 = off)")
    return p


def _search_options(p, top_k: int | None) -> None:
    """--mode and --top-k: how ask, eval and bench retrieve."""
    p.add_argument("--mode", default="hybrid", choices=["hybrid", "dense", "keyword"],
                   help="hybrid: dense and keyword search fused (default); dense: embeddings only; keyword: BM25 only")
    p.add_argument("--top-k", type=int, default=top_k, metavar="K",
                   help=f"passages retrieved per question (default: {top_k or 'RAG_TOP_K or 8'})")


def _ask_options(p) -> None:
    """What ask and chat share: search, answer and filter options, and the conversation so far."""
    _search_options(p, top_k=None)
    p.add_argument("--json", action="store_true", help="print the whole result (answer, citations, scores) as JSON "
                   "(chat: one line per question)")
    p.add_argument("--no-llm", action="store_true", help="extractive answer, no Ollama")
    p.add_argument("--ticker", action="append", help="only this company's filings (repeatable)")
    p.add_argument("--fy", action="append", type=int, help="only filings of this fiscal year (repeatable)")
    p.add_argument("--form", action="append", help="only filings of this form, e.g. 10-K or 10-Q (repeatable)")
    p.add_argument("--history", action="append", metavar="QUESTION",
                   help="an earlier question of the conversation, oldest first (repeatable): a follow-up such as "
                        "\"And in fiscal 2024?\" is asked as the conversation makes it mean")


def _filing_parsers(sub) -> None:
    """download, index, list, edit, remove, facts: the commands that manage filings."""
    p = _common(sub.add_parser("download", help="download filings from EDGAR and index them"))
    p.add_argument("tickers", nargs="+", help="tickers or CIK numbers")
    p.add_argument("--form", default="10-K", choices=["10-K", "10-Q"], help="annual (default) or quarterly reports")
    p.add_argument("--limit", type=int, metavar="N", help="the N latest per ticker (10-Q: quarters), in --years")
    p.add_argument("--years", help="fiscal years, e.g. 2023-2024 or 2022,2024: a 10-K or three 10-Qs each")
    p.add_argument("--no-index", action="store_true", help="download only")
    p.set_defaults(func=cmd_download)

    p = _common(sub.add_parser("index", help="index filing files or folders (.htm, .html, .txt, .pdf)"))
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="filing files, or folders searched all the way down for .htm, .html, .txt and .pdf files")
    p.add_argument("--ticker", help="ticker of every file named, instead of what is read from them")
    p.add_argument("--company", help="company name of every file named, instead of what is read from them")
    p.add_argument("--form", help="form of every file named (10-K, 10-Q, ...), instead of what is read from them")
    p.add_argument("--fiscal-year", type=int, help="the company's own fiscal year label of every file named, e.g. 2024")
    p.set_defaults(func=cmd_index)

    p = _common(sub.add_parser("list", help="list indexed filings"))
    p.add_argument("--json", action="store_true", help="print the filings' records as JSON")
    p.set_defaults(func=cmd_list)

    p = _common(sub.add_parser("jobs", help=cmd_jobs.__doc__))
    p.add_argument("--limit", type=int, default=50, help="how many of the latest jobs (default 50)")
    p.add_argument("--json", action="store_true", help="print the jobs as JSON")
    p.set_defaults(func=cmd_jobs)

    _edit_parser(_common(sub.add_parser("edit", help=cmd_edit.__doc__)))
    p = _common(sub.add_parser("remove", help="remove filings by accession (doc id) or path"))
    p.add_argument("keys", nargs="+", metavar="DOC_ID_OR_PATH",
                   help="a filing's doc id (accession) as `list` shows it, or the path of its file")
    p.set_defaults(func=cmd_remove)

    p = _common(sub.add_parser("facts", help="print inline XBRL facts of a company"))
    p.add_argument("ticker", help="an indexed company's ticker")
    p.add_argument("--fy", type=int, help="only the filing of this fiscal year (the company's own label, e.g. 2024)")
    p.add_argument("--concept", metavar="NAME",
                   help="every fact whose XBRL concept or label contains NAME (us-gaap: prefix optional), e.g. "
                        "Revenues; a usual concept name the filer does not use lists the concept it tags that figure "
                        "with. Without it: the key figures and the consolidated facts of the filing's own year")
    p.set_defaults(func=cmd_facts)


def _question_parsers(sub) -> None:
    """ask, eval, bench: the commands that retrieve."""
    p = _period(_fusion(_common(sub.add_parser("ask", help="ask a question"))))
    p.add_argument("question", help="the question, in quotes")
    _ask_options(p)
    p.set_defaults(func=cmd_ask)

    p = _period(_fusion(_common(sub.add_parser(
        "chat", help="a conversation: questions one a line from stdin, follow-ups planned against earlier ones"))))
    _ask_options(p)
    p.set_defaults(func=cmd_chat)

    p = _period(_fusion(_common(sub.add_parser("eval", help="score a question set against the index"))))
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--questions", metavar="FILE", help="a question set (.jsonl) over the indexed filings")
    src.add_argument("--financebench", help="FinanceBench folder: questions.jsonl, documents.jsonl, pdfs/")
    _search_options(p, top_k=10)
    p.add_argument("--json", help="write the full report here")
    answers = p.add_mutually_exclusive_group()
    answers.add_argument("--no-llm", action="store_true", help="score extractive answers, no Ollama")
    answers.add_argument("--llm", action="store_true",
                         help="answers by the Ollama model (OLLAMA_HOST, RAG_LLM_MODEL), failing when it is not "
                              "reachable; the report adds the model's figures (also printed, without this flag, "
                              "whenever the model answered)")
    p.add_argument("--id", action="append", metavar="ID", help="only this question (repeatable)")
    p.add_argument("--kind", action="append", metavar="KIND", help="only questions of this kind (repeatable)")
    p.add_argument("--no-analysis", action="store_true", help="turn query analysis off (to measure its gain)")
    p.add_argument("--no-history", action="store_true",
                   help="ask each question on its own, ignoring its `history` (to measure what the conversation adds)")
    p.add_argument("--split", default="all", choices=["all", "tune", "blind"],
                   help="score one half of the set's companies (tune on one, report the other)")
    p.set_defaults(func=cmd_eval)

    p = _period(_fusion(_common(sub.add_parser("bench", help="benchmarks that print numbers"))))
    _bench_options(p)

    p = _common(sub.add_parser("migrate", help="copy the embedded index, facts and conversations into team mode's PostgreSQL"))
    p.add_argument("--to", required=True, metavar="URL", help="the database: postgresql://user:password@host/name")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("census", help="count the engine's regex alternatives, word lists and phrase branches")
    p.add_argument("--top", type=int, default=None, metavar="N", help="list only the N modules with most rules")
    p.set_defaults(func=cmd_census)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rag", description="SEC filings: download, index, ask.")
    parser.add_argument("--traceback", action="store_true", help="on a failure, show the Python traceback")
    sub = parser.add_subparsers(dest="command", required=True)
    _filing_parsers(sub)
    _question_parsers(sub)
    return parser


BENCHES = {
    "index": "indexing speed per backend, or peak memory for a synthetic filing",
    "embed": "embedding speed (chunks per second)",
    "retrieve": "retrieval latency over question files",
    "answer": "the model's answers over question files: prompt tokens, first token (OLLAMA_HOST, RAG_LLM_MODEL)",
    "load": "the app under concurrent browser sessions",
    "scale": "a synthetic index of --chunks chunks (the --storage index's, repeated): build, add, search, memory",
}
# The index stores bench scale compares (--backend there; elsewhere --backend names an embedding backend).
STORE_BACKENDS = ("embedded", "postgres")


def _bench_options(p) -> None:
    p.add_argument("what", choices=list(BENCHES), help="; ".join(f"{k}: {v}" for k, v in BENCHES.items()))
    p.add_argument("--sessions", type=int, default=20, help="load: browser sessions asking at once")
    p.add_argument("--per-session", type=int, default=1, help="load: questions each session asks in turn")
    p.add_argument("--time-limit", type=float, default=600.0, help="load: seconds the sessions may take in all")
    p.add_argument("--llm", action="store_true", help="load: answer with Ollama (default: extractive answers)")
    p.add_argument("paths", nargs="*", help="files/folders to index or embed, or question files to time")
    p.add_argument("--backend", action="append", choices=[*EMBED_BACKENDS, *STORE_BACKENDS],
                   help="embedding backend (default RAG_EMBED_BACKEND); repeat to compare backends in one run; "
                        "scale: the index store, embedded or postgres (RAG_DATABASE_URL, an empty database)")
    p.add_argument("--chunks", type=int, default=15_000, help="scale: chunks in the synthetic index")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="answer: only the first N questions")
    p.add_argument("--rounds", type=int, default=1, help="embed: times each backend embeds the chunks, in turns")
    p.add_argument("--synthetic-mb", type=float, default=0.0, metavar="MB",
                   help="index: also index a synthetic 10-K of this size; the peak memory printed is its")
    _search_options(p, top_k=10)
    p.set_defaults(func=cmd_bench)


def main(argv: list[str] | None = None) -> int:
    """Runs a command; returns its exit code. A failure says what went wrong on stderr and returns non-zero."""
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    try:
        code = args.func(args)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except SystemExit as exc:  # a command that stops with a message for the user
        if isinstance(exc.code, str):
            return _fail(exc.code)
        raise
    except BrokenPipeError:  # `python -m rag ask ... | head`: the reader has gone, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - any failure becomes one line for the user, the trace on request
        if args.traceback:
            raise
        return _fail(_failure(exc))
    if code == 0 and args.command in ("index", "download"):
        print(f"done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return code


def _failure(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.strerror}: {exc.filename}"
    return f"{str(exc) or type(exc).__name__} (`python -m rag --traceback ...` shows where it failed)"


if __name__ == "__main__":
    sys.exit(main())
