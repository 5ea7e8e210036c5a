"""The landing folders: which files are new, what format each holds, and which went into bronze."""

from pipelines.landing.discovery import FileScan, LandingFile, scan
from pipelines.landing.listing import discover, list_landing

__all__ = ["FileScan", "LandingFile", "discover", "list_landing", "scan"]
