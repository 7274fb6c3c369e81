"""A sweep killed before it cleaned: the next run removes the canaries it left outside its jobs, and nothing else."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from boundary.scenarios.sweep import leftovers
from boundary.scenarios.sweep.discover import APPENDED_TO, FOUND, new_discovery
from boundary.scenarios.sweep.places import APPENDED, SAID, TOOL, Place, places_of, tool_places


class _Job:
    def __init__(self, checkout: Path) -> None:
        self.checkout = checkout


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A host's `/` of its own, and ledgers of this test's own."""
    monkeypatch.setattr(leftovers, "LEDGERS", tmp_path / "ledgers")
    root = tmp_path / "host"
    for directory in ("tmp", "var/tmp", "etc"):
        (root / directory).mkdir(parents=True)
    return root


def _interrupted_sweep(host: Path, said: str, pid: int) -> tuple[list[Place], Place]:
    """A sweep's ledger, as a run killed after A planted left it: A's /tmp and /var/tmp canaries and one it found
    it may write in /etc."""
    checkout = host.parent / "work" / "job-a"
    checkout.mkdir(parents=True)
    places, discovery = places_of(_Job(checkout)), new_discovery()  # type: ignore[arg-type]
    found = discovery.places[0]
    (checkout / "said").write_text(said.format(found=found.name))
    ledger = leftovers.record(host, [(checkout / "said", places, discovery)])
    ledger.rename(ledger.with_name(f"{pid}-{ledger.name.split('-', 1)[1]}"))
    by_name = {p.name: p for p in places}
    for place, directory in ((by_name["tmp"], "tmp"), (by_name["var_tmp"], "var/tmp"), (found, "etc")):
        (host / directory / place.file).write_text(place.token + "\n")
    return [by_name["tmp"], by_name["var_tmp"]], found


def test_a_dead_runs_canaries_go_where_its_shell_said_and_in_the_host_wide_places(host: Path) -> None:
    # A's shell said where /tmp is, and what it found in /etc; it was killed before it named /var/tmp.
    said = f"{SAID} tmp /tmp\n{FOUND} {{found}} mount /etc\n"
    (tmp, var_tmp), found = _interrupted_sweep(host, said, _dead_pid())
    untouched = host / "tmp" / "someone-elses.txt"
    untouched.write_text("not a canary\n")
    said_lines: list[str] = []
    leftovers.remove(said_lines.append)
    assert not (host / "tmp" / tmp.file).exists()
    assert not (host / "var/tmp" / var_tmp.file).exists(), "a host-wide place has one name: it goes unsaid too"
    assert not (host / "etc" / found.file).exists(), "the place A's shell found is read from what it said"
    assert untouched.exists()
    assert len(said_lines) == 1 and "removed 3 canaries an interrupted run left" in said_lines[0]
    assert not list(leftovers.LEDGERS.iterdir()), "the ledger is done with"


def test_a_file_by_that_name_without_the_canary_is_not_the_sweeps(host: Path) -> None:
    (tmp, _), _found = _interrupted_sweep(host, f"{SAID} tmp /tmp\n", _dead_pid())
    (host / "tmp" / tmp.file).write_text("someone else's now\n")
    leftovers.remove(lambda line: None)
    assert (host / "tmp" / tmp.file).read_text() == "someone else's now\n"


def test_a_live_runs_canaries_are_its_own_to_clean(host: Path) -> None:
    (tmp, _), _found = _interrupted_sweep(host, f"{SAID} tmp /tmp\n", os.getpid())
    leftovers.remove(lambda line: None)
    assert (host / "tmp" / tmp.file).exists()
    assert list(leftovers.LEDGERS.iterdir()), "a live run's ledger stays"


def test_a_canary_line_in_a_shared_file_is_cut_out_and_the_file_kept(host: Path) -> None:
    """A file A appended its canary line to (a writable git config of the account's) is the account's: the next
    run removes the line, never the file."""
    config = host / "etc" / "gitconfig"
    (tmp, _), found = _interrupted_sweep(
        host, f"{SAID} tmp /tmp\n{APPENDED_TO} {{found}} env-X /etc/gitconfig\n", _dead_pid()
    )
    config.write_text("[user]\n\tname = a\n" + APPENDED.format(token=found.token))
    leftovers.remove(lambda line: None)
    assert config.read_text() == "[user]\n\tname = a\n"
    assert not (host / "tmp" / tmp.file).exists()


def test_the_ledger_holds_no_canary_a_job_could_find(host: Path) -> None:
    """The ledger lies in the host's /tmp, where B's sweep looks: written with the tokens themselves, every sweep of
    a runner that lets a job read /tmp found A's canaries in it and said LEAKED (the CI run of c48bc19)."""
    checkout = host.parent / "work" / "job-a"
    checkout.mkdir(parents=True)
    places, discovery = places_of(_Job(checkout)), new_discovery()  # type: ignore[arg-type]
    ledger = leftovers.record(host, [(checkout / "said", places, discovery)]).read_text()
    tokens = [p.token for p in [*places, *discovery.places]]
    assert not [token for token in tokens if token in ledger or token.removeprefix("BOUNDARY-") in ledger]
    assert discovery.seed not in ledger, "the seed derives every discovered place's canary"


def test_a_forged_ledger_removes_nothing_it_did_not_plant(host: Path) -> None:
    """A job may write where the ledgers are: a ledger naming a path that climbs out, or a file with no canary of
    the digest it names, removes nothing."""
    victim = host / "etc" / "passwd"
    victim.write_text("root:x:0:0\n")
    said = host / "said"
    said.write_text(f"{FOUND} discovered-0 walk /etc\n")
    places = [["tmp", "../etc/passwd", leftovers.digest("root:x:0:0")]]
    discovered = [["passwd", leftovers.digest("BOUNDARY-" + "0" * 20)]]
    forged = {"root": str(host), "sides": [{"said": str(said), "places": places, "discovered": discovered}]}
    leftovers.LEDGERS.mkdir()
    (leftovers.LEDGERS / f"{_dead_pid()}-forged.json").write_text(json.dumps(forged))
    leftovers.remove(lambda line: None)
    assert victim.read_text() == "root:x:0:0\n"


def test_a_dead_runs_write_tool_canaries_go_too(host: Path) -> None:
    """A's write tool planted at paths the harness named (the real /tmp): the ledger names them, by digest."""
    checkout = host.parent / "work" / "job-a"
    checkout.mkdir(parents=True)
    places = places_of(_Job(checkout))  # type: ignore[arg-type]
    by_tool = [p for p in tool_places(places, {}) if p.name == "tmp"]
    ledger = leftovers.record(host, [(checkout / "said", places, new_discovery())], by_tool)
    ledger.rename(ledger.with_name(f"{_dead_pid()}-{ledger.name.split('-', 1)[1]}"))
    planted = host / "tmp" / by_tool[0].file
    planted.write_text(by_tool[0].token + "\n")
    leftovers.remove(lambda _: None)
    assert not planted.exists()


def test_the_write_tool_plants_in_each_host_wide_place_the_environment_names() -> None:
    places = places_of(_Job(Path("/work/job-a")))  # type: ignore[arg-type]
    by_tool = {p.name: p for p in tool_places(places, {"TMPDIR": "/state/tmp/a", "HOME": "/state/home/a"})}
    assert by_tool["tmp"].path is not None and by_tool["tmp"].path.parent == Path("/tmp")
    assert by_tool["tmpdir"].directory == "/state/tmp/a" and by_tool["home"].directory == "/state/home/a"
    assert "checkout_untracked" not in by_tool and "data_home" not in by_tool  # its own checkout; XDG_DATA_HOME unset
    tokens = [p.token for p in by_tool.values()] + [p.token for p in places]
    assert len(set(tokens)) == len(tokens) and all(p.how == TOOL for p in by_tool.values())


def test_a_run_removes_what_each_registered_scenario_left_before_it_starts(monkeypatch):
    """prepare knows no scenario's leftovers: it asks each one in the registry, the sweep among them."""
    from boundary.scenarios import Scenario
    from boundary.suite import prepare

    asked: list[str] = []

    class Leaves(Scenario):
        name = "leaves"

        @classmethod
        def remove_leftovers(cls, progress):
            asked.append(cls.name)

    registered = {"sweep": type("Sweep", (Leaves,), {"name": "sweep"}), "leaves": Leaves}
    monkeypatch.setattr(prepare, "registry", lambda: registered)
    monkeypatch.setattr(prepare, "reap_containers", lambda: None)
    prepare.reap_leftovers(lambda line: None)
    assert asked == ["sweep", "leaves"]
    from boundary.scenarios.sweep.scenario import Sweep

    monkeypatch.setattr(leftovers, "remove", lambda progress: asked.append("sweep's ledgers"))
    Sweep.remove_leftovers(lambda line: None)
    assert asked[-1] == "sweep's ledgers"
