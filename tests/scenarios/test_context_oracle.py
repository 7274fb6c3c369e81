"""The model-side oracle: a canary of job A's in anything job B sent the model is LEAKED, whatever carried it."""

from __future__ import annotations

from pathlib import Path

from boundary.model import JobRecord, Script, ToolCall
from boundary.probes import Target
from boundary.scenarios.common_oracles import context_finding

NAME = "BOUNDARY-00000000000000000001"  # in the target's file name: a probe that names the file types it
TARGET = Target("saved_output", Path(f"/s/a.data/tool_{NAME}"), "BOUNDARY-0000000000000000000a", NAME)


def record(*bodies: str) -> JobRecord:
    job = JobRecord("x.job-b")
    job.bodies = [body.encode() for body in bodies]
    return job


def script_naming(path: Path) -> Script:
    script = Script()
    script.add_step(ToolCall("p1", "read", {"filePath": str(path)}))
    return script


def test_a_canary_carried_by_any_request_is_leaked():
    found = context_finding(record("{}", '{"messages": ["BOUNDARY-0000000000000000000a"]}'), [TARGET], Script(), [])
    assert found.verdict == "LEAKED" and "BOUNDARY-0000000000000000000a" in found.detail


def test_a_token_the_probe_itself_typed_is_no_evidence():
    body = '{"tool_calls": [{"filePath": "/s/a.data/tool_BOUNDARY-00000000000000000001"}]}'
    assert context_finding(record(body), [TARGET], script_naming(TARGET.path), []).verdict == "DENIED"


def test_no_request_or_a_broken_job_proves_nothing():
    assert context_finding(record(), [TARGET], Script(), []).verdict == "INCONCLUSIVE"
    assert context_finding(record("{}"), [TARGET], Script(), ["job exited 1"]).verdict == "INCONCLUSIVE"
