"""The analyst workbench: `streamlit run app.py`. Thin: ui/ holds the UI, rag/ the engine.

Pages: Chat (default), Library, and Financials when pages/financials.py exists. Every page shares the sidebar.
"""

from ui import frame

frame.navigation().run()
