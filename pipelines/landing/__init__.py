"""The landing folders: which files are new, what format each holds, and which went into bronze."""

from pipelines.landing.discovery import FileScan, LandingFile, discover, scan

__all__ = ["FileScan", "LandingFile", "discover", "scan"]
