"""The Streamlit UI of the workbench. pages/ stay thin and call in here; rag/ (the engine) knows nothing of it.

    text.py        safe Markdown for untrusted text, passage highlighting, labels (no streamlit: unit-tested)
    core.py        settings, the cached engine, Ollama status, conversations, the user's choices
    sidebar.py     the sidebar every page shares
    filings.py     download from EDGAR / upload, then index, with progress per filing
    chat.py        the chat page
    library.py     the library page
    financials.py  the Financials page: XBRL figures across fiscal years, each with its source passage
"""
