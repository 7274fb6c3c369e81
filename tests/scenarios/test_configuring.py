"""Finding, without the runner's help, the files that configure a job."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from boundary.layout import JobPaths
from boundary.runners.contract import Job
from boundary.scenarios.tamper.configuring import Configuring, discover, snapshot

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
    """The files attacked, each with its first group (a file may be in several)."""
    attacked: dict[Path, str] = {}
    for c in found:
        if c.attacked:
            attacked.setdefault(c.path, c.kind)
    return attacked


def listed(found: list[Configuring]) -> dict[Path, str]:
    """The files found but not attacked, and why."""
    return {c.path: c.not_attacked for c in found if not c.attacked}


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
    # Outside the run's directory: listed with what was done (nothing), never dropped.
    assert set(listed(found)) == {outside, Path("/bin/true"), Path("/bin/sh")}  # the wrapper's #! names /bin/sh
    assert all("outside the run's directory" in why for why in listed(found).values())


def test_argv_names_launch_files(scope: Path) -> None:
    """An absolute argv entry naming a file in scope is a launch file; one outside the scope is not."""
    wrapper = write(scope / "bin" / "run")
    job = make_job(scope, argv=[str(wrapper), "/bin/sh", "go"])
    found = discover(fake_runner([]), job, set(), scope)
    assert kinds(found)[wrapper] == "launch_files" and Path("/bin/sh") not in kinds(found)
    assert Path("/bin/sh") in listed(found)


def test_a_path_inside_a_longer_value_is_named(scope: Path) -> None:
    """`--settings=/x`, `NODE_OPTIONS=--require /x`: a path need not be the whole value to configure the job."""
    settings = write(scope / "etc" / "settings.json", "{}")
    hook = write(scope / "etc" / "hook.js")
    job = make_job(scope, env={"NODE_OPTIONS": f"--require {hook}"}, argv=["/bin/true", f"--settings={settings}"])
    found = kinds(discover(fake_runner([]), job, set(), scope))
    assert found[settings] == "launch_files" and found[hook] == "launch_files"


def test_a_binary_file_is_not_followed(scope: Path) -> None:
    """A database names paths in passing: the files it mentions are not followed."""
    named = write(scope / "etc" / "named.txt")
    database = write(scope / "data" / "db.sqlite", b"SQLite\0\0" + str(named).encode())
    job = make_job(scope, env={"DB": str(database)})
    found = kinds(discover(fake_runner([]), job, set(), scope))
    assert found[database] == "launch_files" and named not in found


def test_files_in_the_checkout_are_project_config_or_the_runners(scope: Path) -> None:
    """Project config paths are listed inside the checkout even when absent; the repository's own files are not
    configuring files; a file in the checkout the launch names, or the runner put there, is (the job can write it)."""
    job = make_job(scope)
    before = snapshot(scope)
    tracked = write(job.checkout / "README.md")
    subprocess.run(["git", "init", "-q"], cwd=job.checkout, check=True)
    subprocess.run(["git", "add", "README.md"], cwd=job.checkout, check=True)
    named = write(job.checkout / "notes.txt")
    runners = write(job.checkout / ".runner" / "sandbox.json", "{}")
    job.env["NOTES"] = str(named)
    found = discover(fake_runner([]), job, snapshot(scope) - before, scope)
    assert kinds(found) == {
        **{job.checkout / p: "project_config" for p, _ in PROJECT},
        named: "runner_files",
        runners: "runner_files",
    }
    assert ("launch_files", named) in {(c.kind, c.path) for c in found}  # in both groups
    assert tracked not in kinds(found) and not any(p.is_relative_to(job.checkout / ".git") for p in kinds(found))


def test_a_database_brings_its_write_ahead_log_and_journal(scope: Path) -> None:
    """SQLite replays its -wal (and a hot -journal) into the database it opens: a job that writes them rewrites
    it. The account's database is found even when nothing names it."""
    db = scope / "accounts" / "account" / "opencode.db"
    db.parent.mkdir(parents=True)
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE t (x)")
    runner = fake_runner([])
    runner.account_db = lambda: db
    found = discover(runner, make_job(scope, env={"OPENCODE_DB": str(db)}), set(), scope)
    groups = {(c.kind, c.path) for c in found}
    for kind in ("runner_files", "launch_files"):
        assert {(kind, Path(f"{db}{s}")) for s in ("", "-wal", "-shm", "-journal")} <= groups


def test_a_runner_with_no_account_database_has_none_to_attack(scope: Path) -> None:
    runner = fake_runner([])
    runner.account_db = lambda: None
    assert not [c for c in discover(runner, make_job(scope), set(), scope) if c.kind == "runner_files"]


def test_agent_config_dirs_and_plants(scope: Path, tmp_path: Path) -> None:
    """Files in the agent's config dirs in scope, and the plant paths, are agent_config; a dir outside is not."""
    config = scope / "home" / ".config" / "opencode"
    existing = write(config / "opencode.json", "{}")
    write(config / "node_modules" / "sdk" / "index.js")
    write(tmp_path / "global" / "opencode.json")
    runner = fake_runner([config, tmp_path / "global"], plant=("plugin/x.js",))
    found = discover(runner, make_job(scope), set(), scope)
    assert {p for p, k in kinds(found).items() if k == "agent_config"} == {existing, config / "plugin" / "x.js"}
    global_dir = tmp_path / "global"
    assert set(listed(found)) == {global_dir / "opencode.json", global_dir / "plugin" / "x.js", Path("/bin/true")}


def test_unreadable_proc_paths_do_not_crash(scope: Path) -> None:
    """An env value naming a /proc entry (one only its owner may stat) is skipped, not a crash."""
    job = make_job(scope, env={"NS": "/proc/1/ns/net", "MORE": "/proc/self/root/nonexistent"})
    found = discover(fake_runner([]), job, set(), scope)
    assert {c.kind for c in found if c.path != Path("/bin/true")} == {"project_config"}


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
