"""A user's corrections of what was read from a filing: company, ticker, form, fiscal year and fiscal period.

`checked_corrections` checks and normalises them against the filing's record; IndexStore.update_filing applies
them to the record, to its chunks' metadata (`with_record`) and to the facts store, without re-embedding.
"""

from __future__ import annotations

import re
from datetime import date

from ..companies import TICKER_FORM, checked_ticker

# What a user may correct, in the order forms show them.
EDITABLE_FIELDS = ("company", "ticker", "form", "fiscal_year", "fiscal_period")
# The record's fields every chunk of the filing carries too: the record is their source of truth.
RECORD_FIELDS_ON_CHUNKS = EDITABLE_FIELDS + ("fiscal_year_source",)
# A 10-Q covers the first three quarters (the fourth is reported in the annual report); an annual report, "FY".
FISCAL_PERIODS = ("Q1", "Q2", "Q3", "FY")
USER_SOURCE = "user"  # fiscal_year_source / fiscal_period_source of a corrected value

# The SEC's periodic reports: the annual 10-K family and the foreign private issuer's 20-F and 40-F, the
# quarterly 10-Q family (transition reports "T", small-business "SB"); "/A" amends any of them.
_ANNUAL_FORM = re.compile(r"^(?:10-K(?:T|405|SB)?|20-F|40-F)(?:/A)?$")
_QUARTERLY_FORM = re.compile(r"^10-Q(?:T|SB)?(?:/A)?$")
FIRST_FISCAL_YEAR = 1993  # EDGAR's electronic filings begin in 1993
COMPANY_CHARS = 200


class InvalidCorrection(ValueError):
    """Corrections that cannot be applied; `problems` says what is wrong with each, in words a user can act on."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def is_annual_form(form: str | None) -> bool:
    return bool(_ANNUAL_FORM.match(str(form or "").upper()))


def _ticker(value, problems: list[str]) -> str | None:
    ticker = checked_ticker(value)
    if ticker is None:
        problems.append(f"ticker {str(value).strip()!r} is not a ticker: {TICKER_FORM}")
    return ticker


def _company(value, problems: list[str]) -> str | None:
    company = " ".join(str(value).split())
    if len(company) <= COMPANY_CHARS:
        return company
    problems.append(f"company is longer than {COMPANY_CHARS} characters")
    return None


def _form(value, problems: list[str]) -> str | None:
    form = re.sub(r"\s+", "", str(value)).upper()
    if _ANNUAL_FORM.match(form) or _QUARTERLY_FORM.match(form):
        return form
    problems.append(f"form {str(value).strip()!r} is not a periodic report: use 10-K or 10-Q (also 10-K/A, 10-Q/A, "
                    "10-KT, 10-QT, 20-F, 40-F)")
    return None


def _fiscal_year(value, problems: list[str], today: date) -> int | None:
    last = today.year + 1  # a fiscal year is named for the year it ends in, which may be next year
    try:
        year = int(str(value).strip())
    except ValueError:
        problems.append(f"fiscal year {str(value).strip()!r} is not a year")
        return None
    if FIRST_FISCAL_YEAR <= year <= last:
        return year
    problems.append(f"fiscal year {year} is outside {FIRST_FISCAL_YEAR}-{last}")
    return None


def _fiscal_period(value, problems: list[str]) -> str | None:
    period = str(value).strip().upper()
    if period in FISCAL_PERIODS:
        return period
    problems.append(f"fiscal period {str(value).strip()!r} is not one of {', '.join(FISCAL_PERIODS)}")
    return None


def _period_fits_form(fields: dict, record: dict, problems: list[str]) -> None:
    """A form and its period must agree: an annual report covers the fiscal year ("FY"), a 10-Q one of the first
    three quarters. A new annual form with no period given takes "FY"."""
    form = fields.get("form", record.get("form"))
    if not form or not (is_annual_form(form) or _QUARTERLY_FORM.match(str(form).upper())):
        return  # a record whose form was never read: nothing to check the period against
    period = fields.get("fiscal_period") or str(record.get("fiscal_period") or "").upper() or None
    if is_annual_form(form):
        if "fiscal_period" not in fields and "form" in fields:
            fields["fiscal_period"] = "FY"
        elif period and period != "FY":
            problems.append(f"a {form} reports a whole fiscal year: its period is FY, not {period}")
    elif period in (None, "FY"):
        problems.append(f"a {form} reports one quarter: give its fiscal period (Q1, Q2 or Q3; the fourth quarter is "
                        "in the annual report)")


def checked_corrections(changes: dict, record: dict, *, today: date | None = None) -> dict:
    """The corrections in `changes` (field -> value; None leaves a field as it is) checked and normalised, keeping
    only those that differ from `record`. Raises InvalidCorrection naming every problem at once."""
    today = today or date.today()
    problems: list[str] = []
    unknown = sorted(k for k in changes if k not in EDITABLE_FIELDS)
    if unknown:
        problems.append(f"{', '.join(unknown)} cannot be edited; only {', '.join(EDITABLE_FIELDS)} can")
    readers = {"ticker": _ticker, "company": _company, "form": _form, "fiscal_period": _fiscal_period,
               "fiscal_year": lambda v, p: _fiscal_year(v, p, today)}
    fields = {}
    for key in EDITABLE_FIELDS:
        value = changes.get(key)
        if value is None:
            continue
        if str(value).strip() == "":
            problems.append(f"{key.replace('_', ' ')} cannot be empty")
            continue
        checked = readers[key](value, problems)
        if checked is not None:
            fields[key] = checked
    if not problems:
        _period_fits_form(fields, record, problems)
    if problems:
        raise InvalidCorrection(problems)
    return {k: v for k, v in fields.items() if v != record.get(k)}


def with_record(nodes: list, record: dict) -> list:
    """The chunks with the record's filing-level metadata (a user's corrections) on top. Only metadata: each
    chunk's text keeps the header line it was embedded with."""
    values = {k: record[k] for k in RECORD_FIELDS_ON_CHUNKS if record.get(k) not in (None, "")}
    for node in nodes:
        for key, value in values.items():
            if key not in node.metadata:  # kept out of what is embedded and prompted, as every other key
                node.excluded_embed_metadata_keys.append(key)
                node.excluded_llm_metadata_keys.append(key)
            node.metadata[key] = value
    return nodes
