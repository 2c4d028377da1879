"""The analyst workbench: `streamlit run app.py`. Thin: ui/ holds the UI, rag/ the engine.

`python -m ui.serve` starts the same app and begins loading the engine before the first page is opened.

Pages: Chat (default), Library, and Financials when pages/financials.py exists. Every page shares the sidebar.
"""

from ui import core, frame

core.start_warm_up()  # once per process: the model, index and fact views load while the page draws
frame.run()
