"""`spade-eval deltas`: two stored rows compared without evaluating again; bad input is one
line and exit 2."""

from pathlib import Path

import pytest

from spade.cli.eval import main
from spade.leaderboard import Leaderboard
from tests.leaderboard.runs import binary_scores, row

SCORES = binary_scores(30, 3)


@pytest.fixture
def board(tmp_path: Path) -> Path:
    returns = {str(i): 0.2 for i in range(30)}
    higher = {str(i): 0.2 + 0.1 * (i % 2) for i in range(30)}
    path = tmp_path / "main.json"
    stored = Leaderboard([
        row("fixed", {"suite": SCORES}, metrics={"suite": {"return": returns}}),
        row("spade", {"suite": SCORES}, metrics={"suite": {"return": higher}}),
    ])  # fmt: skip
    stored.save(path)
    return path


Capture = pytest.CaptureFixture[str]


def test_deltas_of_two_stored_rows_on_a_metric(board: Path, capsys: Capture) -> None:
    assert main(["deltas", "spade", "--baseline", "fixed", "--leaderboard", str(board),
                 "--metric", "return"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("| suite "))
    assert [c.strip() for c in line.split("|")[2:5]] == ["0.200", "0.250", "+0.050*"]
    assert out.rstrip().endswith("Δ = spade − fixed on each sample's return")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["spade", "--baseline", "nope"], "no row labelled 'nope' (labels: fixed, spade)"),
        (
            ["spade", "--baseline", "fixed", "--metric", "retrun"],
            "--metric retrun: neither row has it (they have: accuracy, return)",
        ),
    ],
)
def test_bad_rows_are_one_line(board: Path, capsys: Capture, argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["deltas", *argv, "--leaderboard", str(board)])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


def test_a_missing_leaderboard_is_one_line(tmp_path: Path, capsys: Capture) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["deltas", "a", "--baseline", "b", "--leaderboard", str(tmp_path / "none.json")])
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip() == (
        f"error: spade-eval deltas: leaderboard {tmp_path / 'none.json'} does not exist"
    )
