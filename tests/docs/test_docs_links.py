"""The documentation's relative links resolve, and the README stays a landing page.

Every Markdown link `[text](target)` (and image, and reference definition `[ref]: target`) in README.md,
docs/*.md and examples/**/*.md that is not a web or mail address must name a file that exists relative to the
Markdown file; a `#fragment` must name a heading anchor of the target, computed as GitHub computes it. Links inside
fenced code blocks and inline code spans are not links.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from paths import ROOT

README_MAX_LINES = 250
EXTERNAL = ("http://", "https://", "mailto:")

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_TAG = re.compile(r"<[^>]+>")
LINK_IN_HEADING = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def markdown_files() -> list[Path]:
    """README.md, every docs/*.md and every examples/**/*.md, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").rglob("*.md"))]


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks; the fences themselves are left out."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None:
            closes = opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence)
            if closes and not line.strip().lstrip(fence[0]):
                fence = None
        else:
            yield number, line


def links(text: str) -> Iterator[tuple[int, str]]:
    """(line number, target) of every link outside code: inline links, images and reference definitions."""
    for number, line in prose_lines(text):
        definition = REFERENCE_DEFINITION.match(line)
        if definition:
            yield number, definition.group(1).strip("<>")
            continue
        for match in INLINE_LINK.finditer(CODE_SPAN.sub("code", line)):
            yield number, match.group(1).strip("<>")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: lowercase, punctuation but hyphens and underscores dropped, each
    space a hyphen (inline markup is reduced to its text first)."""
    text = LINK_IN_HEADING.sub(r"\1", heading)
    text = HTML_TAG.sub("", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a Markdown text, a repeated one suffixed -1, -2, … as GitHub does."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(text):
        heading = HEADING.match(line)
        if not heading:
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def shown(path: Path, root: Path) -> str:
    """A path as the failure message names it: relative to the repository where it is inside it."""
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def broken_links(markdown: Path, root: Path = ROOT) -> list[str]:
    """One line per relative link of `markdown` that does not resolve, saying which file, which link and what is
    missing (paths shown relative to `root`)."""
    said: list[str] = []
    for number, target in links(markdown.read_text()):
        if target.startswith(EXTERNAL):
            continue
        path_part, _, fragment = target.partition("#")
        where = f"{shown(markdown, root)}:{number}: link ({target})"
        destination = (markdown.parent / unquote(path_part)).resolve() if path_part else markdown
        if not destination.exists():
            said.append(f"{where}: no file {shown(destination, root)}")
        elif not fragment:
            continue
        elif destination.is_dir() or destination.suffix != ".md":
            said.append(f"{where}: #{fragment} points into {shown(destination, root)}, which is not a Markdown file")
        elif unquote(fragment).lower() not in anchors(destination.read_text()):
            said.append(f"{where}: no heading with the anchor #{fragment} in {shown(destination, root)}")
    return said


@pytest.mark.parametrize("markdown", markdown_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_relative_links_resolve(markdown: Path) -> None:
    """Each relative link names an existing file, and its #fragment a heading anchor of that file."""
    broken = broken_links(markdown)
    assert not broken, "expected every relative link to resolve; broken:\n" + "\n".join(broken)


def test_readme_is_a_landing_page() -> None:
    """README.md stays short: what boundary is, the quick start, and links into docs/."""
    lines = len((ROOT / "README.md").read_text().splitlines())
    assert lines <= README_MAX_LINES, (
        f"expected README.md to stay a landing page of at most {README_MAX_LINES} lines, got {lines}: "
        "move the detail into docs/ and link it"
    )


def test_every_docs_file_is_linked_from_the_readme() -> None:
    """The README's documentation list names every Markdown file under docs/."""
    targets = {target.partition("#")[0] for _, target in links((ROOT / "README.md").read_text())}
    missing = sorted(path.name for path in (ROOT / "docs").glob("*.md") if f"docs/{path.name}" not in targets)
    assert not missing, f"expected README.md to link every docs/*.md; not linked: {missing}"


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("The Nix loop", "the-nix-loop"),
        ("`cross_job`", "cross_job"),
        ("What `just runner-sandbox` does", "what-just-runner-sandbox-does"),
        ("opencode's reference runner", "opencodes-reference-runner"),
        ("Adding a host check or a host kind", "adding-a-host-check-or-a-host-kind"),
        ("Usage: commands, options and recipes", "usage-commands-options-and-recipes"),
        ("A [linked](x.md) heading", "a-linked-heading"),
    ],
)
def test_slug_is_githubs(heading: str, anchor: str) -> None:
    """Anchors are computed as GitHub computes them."""
    assert slug(heading) == anchor


def test_a_broken_link_is_named(tmp_path: Path) -> None:
    """The check can fail: a missing file, a missing anchor and a repeated heading's suffix are told apart."""
    (tmp_path / "other.md").write_text("# Other\n\n## `a_b` c\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n## Part\n\n## Part\n\n[ok](#part-1) [gone](#part-2) [nofile](missing.md)\n"
        "[there](other.md#a_b-c) [`code` text](other.md)\n"
        "```sh\n[in code](nowhere.md)\n```\n`[span](nowhere.md)` [web](https://example.com/x)\n"
    )
    broken = broken_links(page, root=tmp_path)
    assert len(broken) == 2, broken
    assert "#part-2" in broken[0] and "no heading" in broken[0]
    assert "missing.md" in broken[1] and "no file" in broken[1]
