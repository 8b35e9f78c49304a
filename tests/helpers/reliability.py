"""Paths and types the reliability suite shares: the hostile PDFs and the figure recorder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BADPDFS = FIXTURES / "badpdfs"

Figure = Callable[[str, str, str, str], None]
