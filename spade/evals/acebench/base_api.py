"""`BaseApi`: the simulated phone itself (Wi-Fi and whether the device is logged in).

Upstream every phone app subclasses `BaseApi`, so each app instance carries its own copy of
`wifi`/`logged_in`, all loaded from the entry's `initial_config["BaseApi"]`, and a call to
`turn_on_wifi()`/`login_device()` reaches every involved instance. That is one shared device
state, which is what this class is: the phone apps hold a reference to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Result = dict[str, Any]


class BaseApi:
    name = "BaseApi"
    api = ("turn_on_wifi", "login_device")
    saved = ("wifi", "logged_in")
    """The attributes compared with the ground truth's end state."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        config = config or {}
        self.wifi: bool = config.get("wifi", False)
        self.logged_in: bool = config.get("logged_in", True)

    def turn_on_wifi(self) -> Result:
        self.wifi = True
        return {"status": True, "message": "Wi-Fi has been turned on"}

    def login_device(self) -> Result:
        self.logged_in = True
        return {"status": True, "message": "Device has been logged in"}


def fail(message: str) -> Result:
    """The apps' failure answer: no state change, a reason for the model."""
    return {"status": False, "message": message}
