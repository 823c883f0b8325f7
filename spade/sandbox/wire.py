"""The host side of the worker wire protocol: 4-byte big-endian length, then UTF-8 JSON.

Every read has a deadline and a size cap, so a hung or flooding worker can only cost the
caller its timeout, never its memory.
"""

from __future__ import annotations

import os
import select
import struct
import time
from typing import Any

import orjson

HEADER = struct.Struct(">I")


class WireTimeout(Exception):
    """The worker did not answer within the deadline."""


class WireClosed(Exception):
    """The worker closed its end (it crashed or was killed)."""


class WireOverflow(Exception):
    """The worker announced a reply larger than the cap."""


def encode(message: dict[str, Any]) -> bytes:
    # orjson: the host parses every reply of every step, and the stdlib's Python-level
    # wrappers cost more than the pipe round trip itself. (The worker keeps stdlib json.)
    data = orjson.dumps(message)
    return HEADER.pack(len(data)) + data


def write_message(fd: int, message: dict[str, Any]) -> None:
    data = encode(message)
    try:
        written = os.write(fd, data)
        while written < len(data):
            data = data[written:]
            written = os.write(fd, data)
    except OSError as exc:  # BrokenPipeError included: the worker is gone
        raise WireClosed(str(exc)) from exc


class Reader:
    """Reads framed replies from one descriptor with a deadline per message."""

    def __init__(self, fd: int, max_bytes: int) -> None:
        self.fd = fd
        self.max_bytes = max_bytes
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._buffer = bytearray()
        os.set_blocking(fd, False)

    def _fill(self, need: int, deadline: float) -> None:
        while len(self._buffer) < need:
            # Try the read first: a worker on the same core has usually answered already,
            # which saves a poll() per step.
            try:
                chunk = os.read(self.fd, max(need - len(self._buffer), 65536))
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._poll.poll(remaining * 1000.0):
                    raise WireTimeout from None
                continue
            if not chunk:
                raise WireClosed("worker closed the connection")
            self._buffer += chunk

    def read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        self._fill(HEADER.size, deadline)
        (size,) = HEADER.unpack_from(self._buffer)
        if size > self.max_bytes:
            raise WireOverflow(f"reply of {size} bytes exceeds the cap of {self.max_bytes}")
        self._fill(HEADER.size + size, deadline)
        end = HEADER.size + size
        view = memoryview(self._buffer)[HEADER.size : end]
        try:
            message = orjson.loads(view)
        finally:
            view.release()  # the buffer cannot shrink while a view is exported
            del self._buffer[:end]
        if not isinstance(message, dict):
            raise ValueError("reply is not a JSON object")
        return message
