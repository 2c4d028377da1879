"""Chat with the indexed filings (the full chat UI is its own issue)."""

import streamlit as st

from rag.config import get_settings
from rag.index import IndexStore

st.title("Chat")
filings = IndexStore(get_settings()).list_filings()
if not filings:
    st.info("No filings are indexed yet. Index some first: `python -m rag download AAPL --limit 2` "
            "or `python -m rag index PATH`.")
else:
    st.caption(f"{len(filings)} filings indexed.")
