"""`boundary runner init`: a runner repository to start from — boundary's example runner for one agent, the
recipes that run boundary against it, and the CI workflow that runs them — which passes as written.

The templates are the examples themselves (`examples/`, shipped in the package through the `boundary/examples`
link), so what `init` writes is what boundary's own tests run.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

EXAMPLES = Path(str(files("boundary"))) / "examples"
JUSTFILE = "Justfile"
WORKFLOW = ".github/workflows/boundary.yml"


@dataclass(frozen=True)
class Template:
    folder: str  # under examples/runners/
    files: tuple[str, ...]
    command: str  # how boundary starts it, from the repository's root


TEMPLATES: dict[tuple[str, str], Template] = {
    ("opencode", "mjs"): Template("opencode", ("runner.mjs", "guard.js"), "node runner.mjs"),
    ("claude", "sh"): Template("claude", ("runner.sh",), "bash runner.sh"),
    ("codex", "sh"): Template("codex-unprivileged-user", ("runner.sh", "README.md"), "bash runner.sh"),
}
AGENTS = tuple(dict.fromkeys(agent for agent, _ in TEMPLATES))
LANGUAGES = ("sh", "mjs", "py")


class InitError(RuntimeError):
    """What `init` cannot write, and what to do instead."""


def template_for(agent: str, lang: str | None) -> Template:
    """The example for `agent` in `lang` (None: the language boundary has it in)."""
    found = [t for (a, language), t in TEMPLATES.items() if a == agent and lang in (None, language)]
    if not found:
        have = ", ".join(f"{a} ({language})" for a, language in TEMPLATES)
        raise InitError(
            f"no {lang} runner of {agent} jobs to start from; boundary has: {have}. Start from one of those "
            "(any language speaks the protocol: docs/runner-protocol.md)"
        )
    return found[0]


def init(agent: str, lang: str | None, directory: Path, force: bool = False) -> list[Path]:
    """Write the runner, the Justfile and the workflow into `directory`; the paths written."""
    template = template_for(agent, lang)
    texts = {name: (EXAMPLES / "runners" / template.folder / name).read_text() for name in template.files}
    texts[JUSTFILE] = justfile(template)
    texts[WORKFLOW] = workflow(agent, template)
    existing = [name for name in texts if (directory / name).exists()]
    if existing and not force:
        raise InitError(
            f"{directory} already has {', '.join(existing)}: expected none of them there. Move them away, "
            "or pass --force to overwrite them"
        )
    for name, text in texts.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755 if name.endswith(".sh") else 0o644)
    return [directory / name for name in texts]


def justfile(template: Template) -> str:
    text = (EXAMPLES / "runner-repository" / JUSTFILE).read_text()
    return _replaced(text, 'runner := "node runner.mjs"', f'runner := "{template.command}"', JUSTFILE)


def workflow(agent: str, template: Template) -> str:
    """The example workflow, for this runner: its command, its agent, and its files among the watched paths."""
    text = (EXAMPLES / "runner-repository" / WORKFLOW).read_text()
    text = _replaced(text, "runner-command: node runner.mjs", f"runner-command: {template.command}", WORKFLOW)
    text = _replaced(text, "agent: [opencode]", f"agent: [{agent}]", WORKFLOW)
    watched = "".join(f'      - "{name}"\n' for name in template.files if not name.endswith(".md"))
    return _replaced(text, '      - "runner.mjs"\n', watched, WORKFLOW)


def _replaced(text: str, old: str, new: str, where: str) -> str:
    if old not in text:  # the example changed under this code: a bug in boundary, never a half-adapted file
        raise InitError(f"examples/runner-repository/{where}: expected {old!r} in it to adapt, found none")
    return text.replace(old, new)
