"""Financials: exact figures from the filings' inline XBRL, per company and metric across fiscal years."""

from ui import financials, frame

frame.page(financials.render)
