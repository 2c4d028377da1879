"""The indexed filings."""

import streamlit as st

from rag.config import get_settings
from rag.index import IndexStore

st.title("Library")
filings = IndexStore(get_settings()).list_filings()
if filings:
    st.dataframe(
        [{k: f.get(k) for k in ("ticker", "company", "form", "fiscal_year", "period_end", "filing_date", "chunks",
                                "indexed_at")} for f in filings],
        hide_index=True,
    )
else:
    st.info("No filings indexed yet.")
