"""Filings in: EDGAR downloads (through sec-edgar-downloader) and local files, each with its metadata.

Where files land (all under settings.data_dir):

    sec-edgar-filings/<TICKER>/<FORM>/<accession>/full-submission.txt     what EDGAR serves as <accession>.txt
                                                 /primary-document.html    the 10-K/10-Q itself (or .htm, cut out
                                                                            of full-submission.txt when the
                                                                            primary download failed)
                                                 /filing.json              FilingRecord: the metadata
    uploads/<sha256[:16]>/<sanitised name>                                 a file added by hand (.htm/.html/.txt/.pdf)
                         /primary-document.htm                             for a full-submission .txt: its main document
                         /filing.json

The modules: download (EDGAR downloads), listing (EDGAR's list of a company's filings, each placed in its fiscal
year and period, and the choice of the accessions a download needs), local (files added by hand), record
(FilingRecord, the layout names and the metadata rules both share), storage (safe names, checks, temporary folders
swapped into place, reading a file through rag.parse) and failures (why a download failed, in words an analyst can
act on).
"""

from .download import FORMS, Progress, download_filings, validate_user_agent
from .local import UPLOAD_SUFFIXES, add_local_file
from .record import DownloadOutcome, EdgarError, FilingRecord, fiscal_year_from_period_end, list_downloaded

__all__ = [
    "FORMS",
    "UPLOAD_SUFFIXES",
    "DownloadOutcome",
    "EdgarError",
    "FilingRecord",
    "Progress",
    "add_local_file",
    "download_filings",
    "fiscal_year_from_period_end",
    "list_downloaded",
    "validate_user_agent",
]
