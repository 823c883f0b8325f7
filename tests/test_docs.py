"""The README is a guide and docs/ holds the details: the README stays short, starts with the
two set-up commands, dates its figures and shows every package; no docs/ page names a path
outside the repository, and every relative link resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spade.selfplay.recipes import load_recipes

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file() and p.suffix != ".png")
PAGES = [README, ROOT / "leaderboards" / "README.md", *(p for p in DOCS if p.suffix == ".md")]
LINK = re.compile(r"\]\(([^)\s]+)\)")
OUTSIDE = re.compile(
    r"(?<![\w.~/:-])/(?:work|tmp|root|home|usr|opt|mnt|data|models|var|etc|srv|scratch|Users|"
    r"proc|sys)/|~/|(?<![\w.])\.\./|/dev/(?!null)"
)  # machine paths; `../` outside a link that resolves inside the repository


def readme_lines() -> list[str]:
    return README.read_text(encoding="utf-8").splitlines()


def test_the_readme_is_short_and_starts_with_the_two_set_up_commands() -> None:
    lines = readme_lines()
    assert len(lines) <= 450
    assert lines[:4] == ["# spade", "", "## Set up", ""]
    assert lines[4] == "```bash" and lines[7] == "```"
    assert lines[5].startswith("bash install.sh && .venv/bin/spade-eval --checkpoint ")
    assert lines[6] == ".venv/bin/python -m pytest -q"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_inside_the_repository(page: Path) -> None:
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve()
        assert path.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        assert path.exists(), f"{page.name}: {target} does not exist"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{page.name}: {target}: no such heading"


def anchors(page: Path) -> set[str]:
    """The fragment ids GitHub gives a page's headings."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_docs_page_names_a_path_outside_the_repository(page: Path) -> None:
    text = LINK.sub("]()", page.read_text(encoding="utf-8"))  # links: checked above
    found = [m.group(0) for m in OUTSIDE.finditer(text)]
    assert not found, f"{page.relative_to(ROOT)} names paths outside the repository: {found}"


def test_the_architecture_picture_shows_every_package() -> None:
    text = README.read_text(encoding="utf-8")
    picture = text.split("## Architecture", 1)[1].split("```")[1]
    packages = [p.parent.name for p in (ROOT / "spade").glob("*/__init__.py")]
    modules = [p.stem for p in (ROOT / "spade").glob("*.py") if p.stem != "__init__"]
    missing = [n for n in packages + modules if not re.search(rf"\b{n}\b", picture)]
    assert not missing, f"the README's architecture picture lacks {missing}"


def test_the_readme_lists_every_recipe_with_its_command() -> None:
    text = README.read_text(encoding="utf-8")
    for recipe in load_recipes(ROOT / "configs" / "recipes.yaml"):
        assert f"`{recipe.name}`" in text and recipe.command_line in text


def test_every_figure_in_the_readme_is_dated_and_tied_to_a_command() -> None:
    lines = readme_lines()
    figures = [i for i, line in enumerate(lines) if line.startswith("![")]
    for i in figures:
        caption = " ".join(lines[i + 1 : i + 3])
        assert re.search(r"\d{4}-\d{2}-\d{2}", caption), f"figure {lines[i]} has no date"
        assert re.search(r"`spade-\w+[^`]*`", caption), f"figure {lines[i]} names no command"
