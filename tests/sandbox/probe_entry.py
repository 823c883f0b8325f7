"""A `PythonEntry` for the tests of `spade.sandbox.entry`: runs the code it is sent.

Each request is framed as `spade.sandbox.wire` frames them: `{"code": SOURCE}`; the source runs
with `exec` and the reply is `{"out": <the value it left in `out`>}` or `{"error": TEXT}`. The
first reply, before any request, is `{"argv": sys.argv[1:]}`. Standard library only, so that it
can run with no package but `tests` importable.
"""

import json
import os
import struct
import sys

HEADER = struct.Struct(">I")


def _read(size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = os.read(0, size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _write(message: dict) -> None:
    data = json.dumps(message, default=repr).encode()
    os.write(1, HEADER.pack(len(data)) + data)


def main() -> None:
    _write({"argv": sys.argv[1:]})
    while True:
        try:
            (size,) = HEADER.unpack(_read(HEADER.size))
            request = json.loads(_read(size))
        except EOFError:
            return
        namespace: dict = {}
        try:
            exec(request["code"], namespace)
            _write({"out": namespace.get("out")})
        except BaseException as exc:
            _write({"error": f"{type(exc).__name__}: {exc}"})


if __name__ == "__main__":
    main()
