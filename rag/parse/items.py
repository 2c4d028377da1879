"""The Items of each form as the SEC defines them (Form 10-K, Form 10-Q, Form 8-K) and the heading patterns that
open them; shared by the section finder, the cross-reference index reader and the text builder."""

from __future__ import annotations

import re

# The heading patterns; the text builder uses them too, to keep a heading out of a table caption and out of the
# running headers it drops.
ITEM_HEAD_RE = re.compile(
    r"^(?:PART\s+(?P<part>IV|I{1,3})\b[\s.,:;\-–—]*)?ITEMS?\s*(?P<num>\d{1,2})(?:\.(?P<sub>\d\d))?\s?"
    r"(?P<letter>[A-Ca-c])?(?![A-Za-z0-9])[\s.,:;\-–—)]*(?P<rest>.*)",
    re.I | re.S,
)
PART_HEAD_RE = re.compile(r"^PART\s+(IV|I{1,3})\b(?!\s*,?\s*ITEM)", re.I)


def is_heading(text: str) -> bool:
    """Does the text open with an Item or Part heading? Such a line atop a page is how a section is found, even
    where it repeats, so no reader drops it as a running header."""
    return bool(ITEM_HEAD_RE.match(text) or PART_HEAD_RE.match(text))

TENK_ITEMS = [
    ("1", "Business"),
    ("1A", "Risk Factors"),
    ("1B", "Unresolved Staff Comments"),
    ("1C", "Cybersecurity"),
    ("2", "Properties"),
    ("3", "Legal Proceedings"),
    ("4", "Mine Safety Disclosures"),
    ("5", "Market for Registrant's Common Equity, Related Stockholder Matters and Issuer Purchases of Equity "
          "Securities"),
    ("6", "[Reserved]"),
    ("7", "Management's Discussion and Analysis of Financial Condition and Results of Operations"),
    ("7A", "Quantitative and Qualitative Disclosures About Market Risk"),
    ("8", "Financial Statements and Supplementary Data"),
    ("9", "Changes in and Disagreements with Accountants on Accounting and Financial Disclosure"),
    ("9A", "Controls and Procedures"),
    ("9B", "Other Information"),
    ("9C", "Disclosure Regarding Foreign Jurisdictions that Prevent Inspections"),
    ("10", "Directors, Executive Officers and Corporate Governance"),
    ("11", "Executive Compensation"),
    ("12", "Security Ownership of Certain Beneficial Owners and Management and Related Stockholder Matters"),
    ("13", "Certain Relationships and Related Transactions, and Director Independence"),
    ("14", "Principal Accountant Fees and Services"),
    ("15", "Exhibits and Financial Statement Schedules"),
    ("16", "Form 10-K Summary"),
]
TENQ_ITEMS = [
    ("I", "1", "Financial Statements"),
    ("I", "2", "Management's Discussion and Analysis of Financial Condition and Results of Operations"),
    ("I", "3", "Quantitative and Qualitative Disclosures About Market Risk"),
    ("I", "4", "Controls and Procedures"),
    ("II", "1", "Legal Proceedings"),
    ("II", "1A", "Risk Factors"),
    ("II", "2", "Unregistered Sales of Equity Securities and Use of Proceeds"),
    ("II", "3", "Defaults Upon Senior Securities"),
    ("II", "4", "Mine Safety Disclosures"),
    ("II", "5", "Other Information"),
    ("II", "6", "Exhibits"),
]
EIGHTK_ITEMS = [
    ("1.01", "Entry into a Material Definitive Agreement"),
    ("1.02", "Termination of a Material Definitive Agreement"),
    ("1.03", "Bankruptcy or Receivership"),
    ("1.04", "Mine Safety - Reporting of Shutdowns and Patterns of Violations"),
    ("1.05", "Material Cybersecurity Incidents"),
    ("2.01", "Completion of Acquisition or Disposition of Assets"),
    ("2.02", "Results of Operations and Financial Condition"),
    ("2.03", "Creation of a Direct Financial Obligation"),
    ("2.04", "Triggering Events That Accelerate or Increase a Direct Financial Obligation"),
    ("2.05", "Costs Associated with Exit or Disposal Activities"),
    ("2.06", "Material Impairments"),
    ("3.01", "Notice of Delisting or Failure to Satisfy a Continued Listing Rule or Standard"),
    ("3.02", "Unregistered Sales of Equity Securities"),
    ("3.03", "Material Modification to Rights of Security Holders"),
    ("4.01", "Changes in Registrant's Certifying Accountant"),
    ("4.02", "Non-Reliance on Previously Issued Financial Statements"),
    ("5.01", "Changes in Control of Registrant"),
    ("5.02", "Departure of Directors or Certain Officers; Election of Directors; Appointment of Certain Officers"),
    ("5.03", "Amendments to Articles of Incorporation or Bylaws; Change in Fiscal Year"),
    ("5.04", "Temporary Suspension of Trading Under Registrant's Employee Benefit Plans"),
    ("5.05", "Amendments to the Registrant's Code of Ethics, or Waiver of a Provision of the Code of Ethics"),
    ("5.06", "Change in Shell Company Status"),
    ("5.07", "Submission of Matters to a Vote of Security Holders"),
    ("5.08", "Shareholder Director Nominations"),
    ("6.01", "ABS Informational and Computational Material"),
    ("6.02", "Change of Servicer or Trustee"),
    ("6.03", "Change in Credit Enhancement or Other External Support"),
    ("6.04", "Failure to Make a Required Distribution"),
    ("6.05", "Securities Act Updating Disclosure"),
    ("7.01", "Regulation FD Disclosure"),
    ("8.01", "Other Events"),
    ("9.01", "Financial Statements and Exhibits"),
]


def letters(s: str) -> str:
    return re.sub(r"[^a-z]", "", s.lower())


def section_scheme(form: str) -> tuple[list[str], list[str], dict[tuple[str, str], list[int]]]:
    """Labels, canonical titles, and (part, item) -> possible ranks for a form."""
    if "10-Q" in form.upper():
        labels = [f"Part {p} Item {n}" for p, n, _ in TENQ_ITEMS]
        titles = [t for _, _, t in TENQ_ITEMS]
        ranks: dict[tuple[str, str], list[int]] = {}
        for i, (p, n, _) in enumerate(TENQ_ITEMS):
            ranks.setdefault((p, n), []).append(i)
            ranks.setdefault(("", n), []).append(i)
        return labels, titles, ranks
    items = EIGHTK_ITEMS if form.upper().startswith("8-K") else TENK_ITEMS
    labels = [f"Item {n}" for n, _ in items]
    titles = [t for _, t in items]
    ranks = {}
    for i, (n, _) in enumerate(items):
        for p in ("", "I", "II", "III", "IV"):
            ranks[(p, n)] = [i]
    return labels, titles, ranks
