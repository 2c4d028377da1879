"""The analyst workbench: `streamlit run app.py`. Thin: pages/ hold the UI, rag/ the engine."""

import streamlit as st

st.set_page_config(page_title="SEC Filings Analyst", page_icon=":material/finance:", layout="wide")

pages = [
    st.Page("pages/chat.py", title="Chat", icon=":material/chat:", default=True),
    st.Page("pages/library.py", title="Library", icon=":material/folder_open:"),
]
st.navigation(pages).run()
