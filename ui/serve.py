"""Start the app with its engine warming up from the first moment: `python -m ui.serve [streamlit options]`.

`streamlit run app.py` runs no code of ours until a browser opens the page, so the embedding model, the index and
the fact views would only start loading then. This launcher starts that warm-up in the server's own process
first, then hands over to Streamlit; the app's sessions find the same engine (ui.core keeps it per process).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from streamlit.web import cli

from rag.config import get_settings

APP = Path(__file__).resolve().parents[1] / "app.py"


def main(argv: list[str] | None = None) -> None:
    # The UI's cached functions are declared before Streamlit's runtime exists, and its cache says so on import ("No
    # runtime found"): expected here, so that logger is quieted first, and ui.core imported after it.
    logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)
    from . import core

    core.start_warm_up(get_settings())
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
