"""A job's view of the host's paths (`paths_inside`): what crosses into the job is told where the job sees it,
what comes back is read where the host has it; no map, nothing changes."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

from boundary.model import ModelServer, Script, ToolCall
from boundary.model.view import PathView
from boundary.writes.shell import write_line
from tests.model.test_model_server import TOOLS, history, post, tool_calls

CHECKOUT = "/tmp/bnd-run-1/u1/state/checkouts/job-a"
VIEW = PathView.of([(CHECKOUT, "/workspace"), (f"{CHECKOUT}.data", "/job/data"), (f"{CHECKOUT}/.git", "/job/git")])


def test_a_host_directory_and_what_is_below_it_are_named_where_the_job_sees_them():
    assert VIEW.inward(f"cat '{CHECKOUT}/own.txt' {CHECKOUT}") == "cat '/workspace/own.txt' /workspace"
    assert VIEW.inward(f"{CHECKOUT}.data/opencode.db") == "/job/data/opencode.db"  # not the checkout's: a name apart
    assert VIEW.inward(f"{CHECKOUT}/.git/config") == "/job/git/config"  # the bind inside another wins


def test_paths_the_map_does_not_cover_stay_the_hosts_which_an_attacker_inside_would_try():
    other = "/tmp/bnd-run-1/u1/state/checkouts/job-b/secret.txt"
    assert VIEW.inward(other) == other
    assert VIEW.inward(f"/proc/7/root{CHECKOUT}/x") == f"/proc/7/root{CHECKOUT}/x"  # another root's path: as it is
    assert VIEW.inward(f"{CHECKOUT}x/y") == f"{CHECKOUT}x/y"


def test_what_comes_back_names_the_host_paths_again():
    said = "/workspace/own.txt: No such file\n/job/data/x\n/workspaces/other"
    assert VIEW.outward(said) == f"{CHECKOUT}/own.txt: No such file\n{CHECKOUT}.data/x\n/workspaces/other"


def test_encoded_paths_and_payloads_in_shell_commands_are_told_inside_too():
    content = f"#!/bin/sh\necho ran > {CHECKOUT}/report\n" + "padding " * 100  # long enough to be gzip'd
    told = VIEW.inward(write_line(1, Path(f"{CHECKOUT}/hook"), content, computed=True))
    assert CHECKOUT not in told and "gzip -dc" in told
    *paths, payload = sorted((base64.b64decode(blob) for blob in re.findall(r"printf %s (\S+)", told)), key=len)
    assert {path.decode() for path in paths} == {"/workspace", "/workspace/hook"}  # and mkdir -p of its directory
    assert gzip.decompress(payload).decode() == content.replace(CHECKOUT, "/workspace")
    plain = VIEW.inward(write_line(2, Path("/etc/x"), f"{CHECKOUT}.data", computed=False))
    assert [base64.b64decode(b).decode() for b in re.findall(r"printf %s (\S+)", plain)] == ["/job/data"]


def test_no_map_changes_nothing():
    call = ToolCall("c1", "read", {"filePath": f"{CHECKOUT}/x"})
    assert PathView().call(call) is call and PathView().outward(CHECKOUT) == CHECKOUT
    assert not PathView.of([(CHECKOUT, CHECKOUT)])  # a directory bound where it is: no map at all


def test_the_model_server_tells_the_job_its_view_and_records_the_hosts(tmp_path: Path):
    with ModelServer(tmp_path / "model.sock") as server:
        script = Script([[ToolCall("c1", "read", {"filePath": f"{CHECKOUT}/own.txt"})]])
        record = server.open_job("j", script, view=VIEW)
        _, events = post(server, "j", {"messages": history(), "tools": TOOLS})
        assert json.loads(tool_calls(events)[0]["function"]["arguments"]) == {"filePath": "/workspace/own.txt"}
        post(server, "j", {"messages": history(("c1", "<path>/workspace/own.txt</path> BOUNDARY-x")), "tools": TOOLS})
        assert record.results == {"c1": f"<path>{CHECKOUT}/own.txt</path> BOUNDARY-x"}
        assert script.steps[0][0].args == {"filePath": f"{CHECKOUT}/own.txt"}  # the script itself keeps host paths
