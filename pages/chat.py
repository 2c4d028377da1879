"""Chat with the indexed filings: streamed answers with citations that open their passage."""

from ui import chat, core, frame

frame.page(lambda: chat.render(core.PAGES))
