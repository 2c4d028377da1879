"""The Financials page: exact figures from the filings' inline XBRL, per company and metric across fiscal years or
quarters (the three months of each indexed 10-Q, and fourth quarters computed from the 10-K and the Q3 10-Q).

The figures come from the facts layer (rag/facts.py) through the app's cached engine (ui.core.engine); every value
links to the passage of the filing that reports it.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag.facts import METRICS, concept_label

from . import core, history
from .safe import join, md
from .text import PASSAGE_CSS, context_window, highlight_html

DEFAULT_METRICS = ("revenue", "net_income", "operating_income")
HANDFUL = 5  # companies chosen when the page opens
RECENT_CONVERSATIONS = 5  # where the companies asked about lately are looked for
K_COMPANIES, K_METRICS, K_COMPARATIVES = "fin_companies", "fin_metrics", "fin_comparatives"
K_SOURCES, K_PERIODS = "fin_sources", "fin_periods"
YEARS, QUARTERS = "Fiscal years", "Quarters"
# How a chart shows each kind of value: (divide by, unit label).
CHART_SCALES = {"money": (1e6, "USD millions"), "percent": (0.01, "%"), "pure": (0.01, "%"),
                "shares": (1e6, "millions of shares")}


def render() -> None:
    st.title("Financials")
    st.caption("Exact figures read from each filing's inline XBRL (the consolidated totals of each fiscal year, or "
               "of each quarter's three months), never typed by a model. Computed rows (margins, free cash flow, "
               "ratios) show their formula. Select a row to see the passage that reports it.")

    s = core.settings()
    try:
        engine = core.engine(s)
        layer = engine.facts()
        filings = layer.filings()
    except Exception as exc:  # noqa: BLE001 - a broken store must not take the page down
        st.error(md("The figures could not be loaded: {}", exc))
        return

    with_figures = {f["ticker"] for f in filings if f.get("ticker") and f.get("fiscal_year") and f.get("fact_count")}
    indexed = {str(f["ticker"]) for f in core.filings(s).values() if f.get("ticker")}
    tickers = sorted(with_figures | indexed)
    if not tickers:
        st.info("No filings are indexed yet. Add 10-K or 10-Q filings (sidebar: **Add filings**, or "
                "`python -m rag index PATH`): their XBRL figures are stored as each filing is indexed.",
                icon=":material/table_chart:")
        return

    labels = {m.key: m.label for m in METRICS if m.listed}
    chosen, metric_keys, with_comparatives, quarterly = _choices(tickers, labels, _recent_companies(s, tickers))
    without = [t for t in chosen if t not in with_figures]
    if without:
        st.info(md("No XBRL figures in the indexed filings of {}: they carry none (a PDF, or a document without "
                   "inline XBRL). Ask about them in the chat, which reads their text.", join(", ", without)),
                icon=":material/info:")
    chosen = [t for t in chosen if t in with_figures]
    if not chosen or not metric_keys:
        if not without:
            st.info("Choose at least one company and one metric.")
        return

    rows = layer.quarter_history(chosen, metric_keys) if quarterly else layer.history(chosen, metric_keys)
    if not with_comparatives and not quarterly:
        rows = [r for r in rows if not r["comparative"]]
    if not rows and quarterly:
        st.warning("No quarterly figures for these companies: index their 10-Q filings (a fourth quarter is "
                   "computed when the 10-K and the third-quarter 10-Q of its year are both indexed).")
        return
    if not rows:
        st.warning("None of these metrics is in the chosen companies' XBRL data (some 10-Ks, e.g. IBM's and Wells "
                   "Fargo's, put their financial statements in an exhibit that is not indexed).")
        return

    missing = [labels[k] for k in metric_keys if not any(r["metric"] == k for r in rows)]
    if missing:
        st.caption(md("Not in these companies' XBRL data: {}.", join(", ", missing)))
    df = pd.DataFrame(rows)
    df["company_label"] = df["company"].fillna("") + " (" + df["ticker"] + ")"
    if quarterly:
        df["FY"] = "FY" + df["fiscal_year"].astype(str) + " Q" + df["quarter"].astype(int).astype(str)
        df["cell"] = df["display"] + df["computed_q4"].map({True: " †", False: ""})
    else:
        df["FY"] = "FY" + df["fiscal_year"].astype(str)
        df["cell"] = df["display"] + df["comparative"].map({True: " *", False: ""})

    _table(df, quarterly)
    _charts(df, metric_keys, labels, quarterly)
    _sources(df, rows, layer, engine)


def _recent_companies(s, tickers: list[str]) -> list[str]:
    """The companies the latest answers were about (what their questions named, else what they cited), newest
    first, up to HANDFUL."""
    found: list[str] = []
    for conv in history.list_conversations(s)[:RECENT_CONVERSATIONS]:
        for msg in reversed(history.messages(conv["id"], s)):
            result = msg.get("result") or {}
            named = (result.get("detected") or {}).get("tickers") or []
            cited = [c.get("ticker") for c in result.get("citations") or []]
            found += [t for t in (named or cited) if t in tickers and t not in found]
            if len(found) >= HANDFUL:
                return found[:HANDFUL]
    return found


def _choices(tickers: list[str], labels: dict[str, str],
             recent: list[str]) -> tuple[list[str], list[str], bool, bool]:
    """The companies (at first the sidebar's filter, else those asked about lately, else the first HANDFUL), the
    metrics, whether to include comparative years, and fiscal years or quarters."""
    preferred = [t for t in st.session_state.get(core.K_TICKERS) or [] if t in tickers]
    left, right = st.columns([2, 3])
    chosen = left.multiselect("Companies", tickers, default=preferred or recent or tickers[:HANDFUL],
                              key=K_COMPANIES)
    metric_keys = right.multiselect("Metrics", list(labels), default=list(DEFAULT_METRICS), format_func=labels.get,
                                    key=K_METRICS)
    quarterly = st.radio("Periods", [YEARS, QUARTERS], horizontal=True, key=K_PERIODS,
                         help="Quarters: the three months of each indexed 10-Q; a fourth quarter is the fiscal year "
                              "minus the nine months, computed when both filings are indexed.") == QUARTERS
    with_comparatives = quarterly or st.toggle(
        "Include earlier years reported as prior-year comparatives", value=True, key=K_COMPARATIVES,
        help="A 10-K also reports the previous years. Those years are shown (marked) when no 10-K of their own is "
             "indexed.")
    return chosen, metric_keys, with_comparatives, quarterly


def _table(df: pd.DataFrame, quarterly: bool = False) -> None:
    """One row per company and metric, one column per fiscal year or quarter, values as the filing states them."""
    wide = df.pivot_table(index=["company_label", "label"], columns="FY", values="cell", aggfunc="first")
    wide = wide.reindex(columns=sorted(wide.columns)).fillna("—")
    wide.index.names = ["Company", "Metric"]
    st.dataframe(wide, width="stretch")
    if quarterly and df["computed_q4"].any():
        st.caption("† fourth quarter, computed: the fiscal year (10-K) minus the nine months (third-quarter 10-Q); "
                   "a fourth quarter is not filed on its own.")
    if not quarterly and df["comparative"].any():
        st.caption("\\* read from the next fiscal year's 10-K (its prior-year comparative): no 10-K of that year is "
                   "indexed.")


def _charts(df: pd.DataFrame, metric_keys: list[str], labels: dict[str, str], quarterly: bool = False) -> None:
    """One chart per metric (units differ between metrics), one line per company, in the metric's unit."""
    for key in metric_keys:
        part = df[df["metric"] == key]
        if part.empty:
            continue
        kind = part["kind"].iloc[0]
        scale, unit = CHART_SCALES.get(kind, (1.0, "per share" if kind == "per_share" else ""))
        chart = part.assign(v=part["value"] / scale).pivot_table(index="FY" if quarterly else "fiscal_year",
                                                                  columns="ticker", values="v", aggfunc="first")
        chart.index = chart.index.astype(str)
        st.markdown(md("**{}** · {}", labels[key], unit))
        st.bar_chart(chart, stack=False, height=220)


def _sources(df: pd.DataFrame, rows: list[dict], layer, engine) -> None:
    """Every value with its source, a CSV of them all; a selected row shows the passage that reports it."""
    st.subheader("Sources")
    long = df[["ticker", "label", "period", "display", "period_end", "concept", "source", "comparative"]].rename(
        columns={"ticker": "Company", "label": "Metric", "period": "Period", "display": "Value",
                 "period_end": "Period end", "concept": "XBRL concept", "source": "Reported in",
                 "comparative": "Comparative"})
    event = st.dataframe(long, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key=K_SOURCES)
    csv = df.drop(columns=["inputs", "company_label", "FY", "cell"]).to_csv(index=False)
    st.download_button("Download CSV", csv, file_name="financials.csv", mime="text/csv", icon=":material/download:")

    selected = event.selection.rows if event and getattr(event, "selection", None) else []
    if not selected:
        st.caption("Select a row to see where the figure is reported.")
        return
    item = rows[selected[0]] if len(rows) > selected[0] else None
    if item is None:
        return
    with st.container(border=True):
        if item["inputs"]:  # a computed figure: its formula, then the source of each reported input
            st.markdown(md("**{}**, {} {}: **{}** = {}", item["label"], item["ticker"], _period(item), item["display"],
                           item["formula"] or ""))
            for i, part in enumerate(item["inputs"]):
                if i:
                    st.divider()
                _show_source(part, layer, engine)
        else:
            _show_source(item, layer, engine)


def _show_source(item: dict, layer, engine) -> None:
    """The passage that reports one reported figure, the figure highlighted in its filing's text."""
    st.markdown(md("**{}**, {} {}: **{}** · {}", item["label"], item["ticker"], _period(item), item["display"],
                   item["source"]))
    st.caption(md("XBRL {} ({}), period ending {}", item["concept"] or "", concept_label(item["concept"] or ""),
                  item["period_end"])
               + (md(", {}", str(item["dimensions"])) if item.get("dimensions") else md("")))
    fact = next((g.best for g in layer.view(layer.store.filing(item["doc_id"])).groups
                 if g.best.concept == item["concept"] and g.best.period_end == item["period_end"]
                 and g.best.dimensions == (item.get("dimensions") or {}) and g.best.chunk_id == item["chunk_id"]),
                None) if item.get("doc_id") else None
    text = ""
    try:
        idx = engine.index()
        if item.get("doc_id") in idx.filings:
            text = idx.filing_text(item["doc_id"])
    except Exception:  # noqa: BLE001 - no passage is better than no page: the chunk is shown instead
        text = ""
    if fact is not None and text and 0 <= fact.char_start < fact.char_end <= len(text):
        st.html(PASSAGE_CSS + highlight_html(*context_window(text, fact.char_start, fact.char_end, 600, 600)))
    else:
        chunk = layer.chunk(item.get("chunk_id"))
        if chunk:
            st.html(PASSAGE_CSS + highlight_html("", chunk[0], "", mark=False))
        else:
            st.caption("This figure is not shown in the filing's visible text (a hidden XBRL fact).")


def _period(item: dict) -> str:
    """'FY2024', or 'Q3 FY2025' for a quarter."""
    return item.get("period") or f"FY{item['fiscal_year']}"
