"""The Streamlit UI of the workbench. pages/ stay thin and call in here; rag/ (the engine) knows nothing of it.

    text.py        safe Markdown for untrusted text, passages drawn (tables from their cells, what supports the
                   answer marked), labels (no streamlit: unit-tested)
    safe.py        the one path untrusted text takes into Markdown-rendering elements: md(), plain(), join()
    core.py        settings, the per-process engine (warmed up in the background) and filing queue, Ollama status,
                   conversations, the user's choices
    serve.py       `python -m ui.serve`: the app, with the engine warming up before the first page is opened
    sidebar.py     the sidebar every page shares
    filings.py     download from EDGAR / upload (read, checked and corrected by the user in a dialog), queued
    jobs.py        the sidebar's live view of this session's batches in the background queue: per filing state,
                   chunks, time left, cancel, a summary and Dismiss per batch
    chat.py        the chat page
    library.py     the library page
    financials.py  the Financials page: XBRL figures across fiscal years, each with its source passage
"""
