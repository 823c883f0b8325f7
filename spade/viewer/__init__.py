"""Static HTML reports of spade-eval results and spade-train runs (`spade-eval view DIR`)."""

from spade.viewer.errors import ViewError
from spade.viewer.report import build_report, write_report

__all__ = ["ViewError", "build_report", "write_report"]
