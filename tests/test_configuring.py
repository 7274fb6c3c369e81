"""Finding, without the runner's help, the files that configure a job."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from boundary.configuring import Configuring, discover, snapshot
from boundary.layout import JobPaths
from boundary.runners.contract import Job

PROJECT = (("opencode.json", "project config"), (".opencode/plugin/x.js", "project plugin"))


@pytest.fixture
def scope(tmp_path: Path) -> Path:
    (tmp_path / "state").mkdir()
    return tmp_path / "state"


def fake_runner(config_dirs: list[Path], plant: tuple[str, ...] = ()) -> SimpleNamespace:
    agent = SimpleNamespace(
        config_dirs=lambda env: config_dirs, config_plant=plant, project_config_paths=lambda: PROJECT
    )
    return SimpleNamespace(agent=agent)


def make_job(scope: Path, env: dict[str, str] | None = None, argv: list[str] | None = None) -> Job:
    checkout = scope / "jobs" / "j" / "checkout"
    checkout.mkdir(parents=True)
    paths = JobPaths("j", checkout, scope / "jobs" / "j" / "data")
    return Job("j", paths, argv or ["/bin/true"], env or {})


def write(path: Path, text: str | bytes = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def kinds(found: list[Configuring]) -> dict[Path, str]:
    return {c.path: c.kind for c in found}


def test_files_the_runner_created_outside_the_checkout(scope: Path) -> None:
    """Files that appeared outside the checkout are runner_files; those inside the checkout and symlinks are not."""
    job = make_job(scope)
    before = snapshot(scope)
    settings = write(scope / "jobs" / "j" / "private" / "settings.json", "{}")
    write(job.checkout / "README.md")
    link = scope / "jobs" / "j" / "link"
    link.symlink_to(settings)
    found = kinds(discover(fake_runner([]), job, snapshot(scope) - before, scope))
    assert found[settings] == "runner_files"
    assert job.checkout / "README.md" not in found and link not in found


def test_launch_files_and_what_they_name(scope: Path, tmp_path: Path) -> None:
    """A file named by an env var, and an absolute path or file:// URI named inside it, are launch_files."""
    wrapper = write(scope / "bin" / "wrapper.sh")
    settings = write(scope / "etc" / "sandbox.json")
    plugin = write(scope / "etc" / "plugin.js")
    outside = write(tmp_path / "outside.txt")
    wrapper.write_text(f'#!/bin/sh\nexec srt --settings {settings} "$@"\n# also {outside}\n')
    settings.write_text(f'{{"plugin": ["file://{plugin}"]}}')
    job = make_job(scope, env={"WRAPPER": f"{wrapper}:/usr/bin", "HOME": "relative"})
    found = discover(fake_runner([]), job, set(), scope)
    assert kinds(found) == {
        wrapper: "launch_files",
        settings: "launch_files",
        plugin: "launch_files",
        **{job.checkout / p: "project_config" for p, _ in PROJECT},
    }
    why = {c.path: c.why for c in found}
    assert why[wrapper] == "named by $WRAPPER" and why[settings] == f"named in {wrapper}"


def test_argv_names_launch_files(scope: Path) -> None:
    """An absolute argv entry naming a file in scope is a launch file; one outside the scope is not."""
    wrapper = write(scope / "bin" / "run")
    job = make_job(scope, argv=[str(wrapper), "/bin/sh", "go"])
    found = kinds(discover(fake_runner([]), job, set(), scope))
    assert found[wrapper] == "launch_files" and Path("/bin/sh") not in found


def test_a_binary_file_is_not_followed(scope: Path) -> None:
    """A database names paths in passing: the files it mentions are not followed."""
    named = write(scope / "etc" / "named.txt")
    database = write(scope / "data" / "db.sqlite", b"SQLite\0\0" + str(named).encode())
    job = make_job(scope, env={"DB": str(database)})
    found = kinds(discover(fake_runner([]), job, set(), scope))
    assert found[database] == "launch_files" and named not in found


def test_files_in_the_checkout_are_only_project_config(scope: Path) -> None:
    """Project config paths are listed inside the checkout even when absent; other checkout files are not."""
    job = make_job(scope)
    in_checkout = write(job.checkout / "notes.txt")
    job.env["NOTES"] = str(in_checkout)
    found = discover(fake_runner([]), job, set(), scope)
    assert kinds(found) == {job.checkout / p: "project_config" for p, _ in PROJECT}
    assert not any(c.path.exists() for c in found)


def test_agent_config_dirs_and_plants(scope: Path, tmp_path: Path) -> None:
    """Files in the agent's config dirs in scope, and the plant paths, are agent_config; a dir outside is not."""
    config = scope / "home" / ".config" / "opencode"
    existing = write(config / "opencode.json", "{}")
    write(config / "node_modules" / "sdk" / "index.js")
    write(tmp_path / "global" / "opencode.json")
    runner = fake_runner([config, tmp_path / "global"], plant=("plugin/x.js",))
    found = kinds(discover(runner, make_job(scope), set(), scope))
    assert {p for p, k in found.items() if k == "agent_config"} == {existing, config / "plugin" / "x.js"}


def test_unreadable_proc_paths_do_not_crash(scope: Path) -> None:
    """An env value naming a /proc entry (one only its owner may stat) is skipped, not a crash."""
    job = make_job(scope, env={"NS": "/proc/1/ns/net", "MORE": "/proc/self/root/nonexistent"})
    found = discover(fake_runner([]), job, set(), scope)
    assert {c.kind for c in found} == {"project_config"}


def test_proc_scope_does_not_crash(scope: Path) -> None:
    """With /proc as the scope, /proc entries are kernel objects, never configuring files, whoever may stat them."""
    job = make_job(scope, env={"NS": "/proc/1/ns/net:/proc/1/mem"})
    found = discover(fake_runner([]), job, set(), Path("/proc"))
    assert all(c.path != Path("/proc/1/ns/net") for c in found)


def test_a_file_in_a_colon_list_is_followed(scope: Path) -> None:
    """A launch file naming another in a colon-separated list (PATH=…:…) names it: it is followed."""
    plugin = write(scope / "etc" / "plugin.js")
    env_file = write(scope / "etc" / "job.env", f"NODE_PATH={plugin}:/usr/lib/node\n")
    job = make_job(scope, env={"ENV_FILE": str(env_file)})
    found = kinds(discover(fake_runner([]), job, set(), scope))
    # ':' ends a path in a launch file's text as it does in the env: plugin.js is listed and attacked.
    assert found.get(plugin) == "launch_files"
