"""The rendered-task scratch folder of an lm-eval run never turns an exit into a traceback."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile

import pytest

from spade.evals.lm_eval_runner import _scratch


def _not_empty(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOTEMPTY, "Directory not empty")


def test_a_folder_still_written_at_cleanup_is_left_without_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As when another benchmark fails and the process exits while this one's thread still
    # writes there: removing the folder fails. A plain temporary folder raises on it ...
    monkeypatch.setattr(os, "rmdir", _not_empty)
    with pytest.raises(OSError), tempfile.TemporaryDirectory(prefix="spade-test-") as plain:
        pass
    # ... the scratch folder does not.
    with _scratch() as tmp:
        assert os.path.isdir(tmp)
    monkeypatch.undo()
    for left in (plain, tmp):
        shutil.rmtree(left, ignore_errors=True)
