"""The indexed filings: what is there, remove, re-index, read an Item."""

from ui import frame, library

frame.page(library.render)
