"""`shell_discovered` from the shell alone (issue 58 item 4): where the Python client is stopped, the shell's own
listing answers the cells; where both ran, a place either one listed counts as listed; a listing cut short or left
unfinished proves nothing by what it did not print."""

from __future__ import annotations

import pytest
from test_reach_judge import DENIALS, HELD, OWN, PROGRAMS, SHELL_LISTED, TOKEN, judge

from boundary.verdict import Proof, Verdict

GUARD = "not allowed by the interpreter guard"
GUARDED = {**DENIALS, "interpreter guard": (GUARD,)}
NODE_STOPPED = f"error run Node exited 1: Error: node is {GUARD}"
# A sandbox that lets the shell do anything but stops Python and Node from starting (InterpreterGuardOnly's kind):
# the programs' tries, the shell's listing, then the Python client refused before its first line.
UNCONFINED = f"""REACH shell:own-tcp listed
REACH shell:own-unix listed
REACH shell:curl:found:unix:/run/boundary-runner-api.sock answered {TOKEN["runner_api_unix"]}
REACH shell:node:found:unix:/run/boundary-runner-api.sock {NODE_STOPPED}
REACH shell:curl:found:unix:/run/docker.sock error connect EACCES
REACH shell:node:found:unix:/run/docker.sock {NODE_STOPPED}
REACH shell:curl:found:unix:/run/dbus/system_bus_socket error connect UNKNOWN curl: (56) Recv failure
REACH shell:node:found:unix:/run/dbus/system_bus_socket {NODE_STOPPED}
REACH shell:bash:found:tcp:127.0.0.1:8317 answered HTTP/1.0 200 OK {TOKEN["runner_api_tcp"]}
REACH shell:curl:found:tcp:127.0.0.1:8317 answered {TOKEN["runner_api_tcp"]}
REACH shell:node:found:tcp:127.0.0.1:8317 {NODE_STOPPED}
REACH shell:done
python is {GUARD}
"""


def test_where_the_python_client_is_stopped_the_shells_listing_answers_the_cells():
    """Before: every cell INCONCLUSIVE (`the client did not finish`). Now what the shell listed and reached is
    LEAKED, what it listed and was refused is DENIED, and what its controlled listing lacks is not in view."""
    found = {t: judge((t, "shell_discovered"), PROGRAMS + UNCONFINED, denials=GUARDED) for t in TOKEN}
    assert found["runner_api_unix"].verdict is Verdict.LEAKED, found["runner_api_unix"]
    assert "shell:curl:found:unix:/run/boundary-runner-api.sock" in found["runner_api_unix"].detail
    assert found["runner_api_tcp"].verdict is Verdict.LEAKED and "shell:bash:" in found["runner_api_tcp"].detail
    metadata = found["metadata"]
    assert (metadata.verdict, metadata.layer, metadata.proof) == (Verdict.DENIED, "OS sandbox", Proof.CONTROLLED)
    assert "the shell's own listener of that kind was listed" in metadata.detail, metadata
    docker = found["docker_api"]  # curl refused by the socket's mode, Node by the guard, in its declared words
    assert docker.verdict is Verdict.DENIED and "EACCES" in docker.detail and GUARD in docker.detail, docker
    bus = found["system_bus"]  # reached, but no Hello was made: nothing proven either way
    assert bus.verdict is Verdict.INCONCLUSIVE and "Recv failure" in bus.detail, bus


def test_a_stopped_programs_words_prove_nothing_unless_a_layer_declares_them():
    docker = judge(("docker_api", "shell_discovered"), PROGRAMS + UNCONFINED)
    assert docker.verdict is Verdict.INCONCLUSIVE and "Node exited 1" in docker.detail, docker


def test_where_no_interpreter_runs_under_srt_every_place_is_held_by_the_os_layer():
    """A container with no python3 under srt: the shell's listing alone, its own TCP listener listed and no unix
    socket makeable (curl's silent refusal held by that), answers every cell."""
    result = PROGRAMS + SHELL_LISTED + "bash: line 90: /usr/bin/python3: No such file or directory\n"
    for target in TOKEN:
        finding = judge((target, "shell_discovered"), result)
        assert (finding.verdict, finding.layer) == (Verdict.DENIED, "OS sandbox"), (target, finding)


def test_a_place_either_listing_found_counts_as_listed():
    """The Python client listed no metadata listener (its view, its refusal); the shell's listing did, and reached
    it: LEAKED. Where the shell's try proves nothing, nor does the cell."""
    reached = HELD.replace(
        "REACH shell:done",
        f"REACH shell:bash:found:tcp:169.254.169.254:80 answered {TOKEN['metadata']}\nREACH shell:done",
    )
    assert judge(("metadata", "shell_discovered"), reached).verdict is Verdict.LEAKED
    odd = reached.replace(f"answered {TOKEN['metadata']}", "error connect ETIMEDOUT")
    finding = judge(("metadata", "shell_discovered"), odd)
    assert finding.verdict is Verdict.INCONCLUSIVE and "ETIMEDOUT" in finding.detail, finding


@pytest.mark.parametrize(
    ("result", "why"),
    [
        (HELD.replace("REACH shell:done\n", "REACH shell:cut named tried 2 of 9\nREACH shell:done\n"), "tried 2 of 9"),
        (
            HELD.replace("REACH shell:done\n", "REACH shell:cut named find / did not finish within 30 s\n"),
            "find / did not finish",
        ),
        (HELD.replace("REACH shell:done\n", ""), "the shell did not finish its discovery"),
        (HELD.replace("REACH done", "REACH discover:find error find TimeoutExpired\nREACH done"), "TimeoutExpired"),
    ],
    ids=["shell-cut", "shell-find-cut", "shell-unfinished", "python-find-cut"],
)
def test_a_listing_cut_short_or_unfinished_proves_nothing(result, why):
    """Each listing that began must end whole, whichever it is: the other's being whole does not make up for it."""
    finding = judge(("metadata", "shell_discovered"), result)
    assert finding.verdict is Verdict.INCONCLUSIVE and why in finding.detail, finding


def test_a_place_listed_that_nothing_here_could_try_proves_nothing():
    untried = "REACH shell:found:unix:/run/docker.sock named untried: no curl nor node here\n"
    result = PROGRAMS + UNCONFINED.replace("REACH shell:done", untried + "REACH shell:done").replace(
        "REACH shell:curl:found:unix:/run/docker.sock error connect EACCES\n", ""
    ).replace(f"REACH shell:node:found:unix:/run/docker.sock {NODE_STOPPED}\n", "")
    finding = judge(("docker_api", "shell_discovered"), result, denials=GUARDED)
    assert finding.verdict is Verdict.INCONCLUSIVE and "no program here could try it" in finding.detail, finding


def test_the_shells_own_listener_unlisted_and_no_client_prove_nothing_about_what_is_not_listed():
    blind = (PROGRAMS + UNCONFINED).replace("shell:own-tcp listed", "shell:own-tcp error listen NOLISTENER")
    finding = judge(("metadata", "shell_discovered"), blind, denials=GUARDED)
    assert finding.verdict is Verdict.INCONCLUSIVE and "NOLISTENER" in finding.detail, finding
    assert OWN not in finding.detail
