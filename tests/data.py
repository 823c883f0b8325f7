"""Where the tests find the offline benchmark data: $SPADE_DATA_DIR, else ../shared/data."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("SPADE_DATA_DIR") or REPO.parent / "shared" / "data")
