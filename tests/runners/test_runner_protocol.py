"""The runner protocol: a runner command's answers are read strictly, and every bad answer is one clear line."""

from __future__ import annotations

import json
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import ROOT

from boundary.layout import JobPaths
from boundary.runners import AGENTS, command, knowledge, protocol, runner
from boundary.runners.check import check_runner
from boundary.runners.claude import all_but
from boundary.runners.command import CommandRunner
from boundary.runners.contract import Job
from boundary.runners.protocol import ProtocolError, SetupAnswer, read_describe, read_job, read_setup
from boundary.sandboxes import OS_DENIALS
from boundary.suite import pytest_args
from boundary.suite.prepare import wording_problem

DESCRIBE = {
    "protocol": 1,
    "name": "fake",
    "agent": "opencode",
    "sandbox": "srt",
    "denials": {"OS sandbox": ["No such file or directory"]},
    "expected_tools": ["bash", "read"],
    "forbidden_tools": ["opencode_*"],
}


def job_answer(state: Path, **changes: Any) -> dict[str, Any]:
    checkout = state / "checkouts" / "a"
    checkout.mkdir(parents=True, exist_ok=True)
    answer = {
        "argv": ["/bin/true"],
        "env": {"HOME": str(state / "home")},
        "checkout": str(checkout),
        "data": str(state / "checkouts" / "a.data"),
    }
    return {k: v for k, v in (answer | changes).items() if v is not None}


def test_a_good_description_is_read_whole():
    description = read_describe(json.dumps(DESCRIBE | {"sandbox_version": "srt 0.0.83"}))
    assert description.agent == "opencode" and description.sandbox_version == "srt 0.0.83"
    assert description.denials == {"OS sandbox": ("No such file or directory",)}
    assert description.expected_tools == frozenset({"bash", "read"})


@pytest.mark.parametrize(
    ("stdout", "says"),
    [
        ("not json", "malformed JSON"),
        ("[1, 2]", "expected one JSON object on stdout, got list"),
        (json.dumps({k: v for k, v in DESCRIBE.items() if k != "agent"}), "field 'agent': missing"),
        (json.dumps(DESCRIBE | {"protocol": 2}), "field 'protocol': expected protocol version 1, got 2"),
        (json.dumps(DESCRIBE | {"protocol": "1"}), "field 'protocol': expected int, got str"),
        (json.dumps(DESCRIBE | {"agent": "aider"}), "field 'agent': expected one of opencode, claude, codex"),
        (json.dumps(DESCRIBE | {"denials": {}}), "field 'denials': expected at least one layer"),
        (json.dumps(DESCRIBE | {"denials": {"OS": "No such file"}}), "layer 'OS': 'No such file' is no reference"),
        (json.dumps(DESCRIBE | {"denials": {"OS": []}}), "layer 'OS': expected a reference (agent, srt"),
        (json.dumps(DESCRIBE | {"expected_tools": []}), "field 'expected_tools': expected at least one entry"),
        (json.dumps(DESCRIBE | {"expected_tools": "bash"}), "field 'expected_tools': expected list, got str"),
    ],
)
def test_a_bad_description_names_the_verb_and_the_field(stdout, says):
    with pytest.raises(ProtocolError) as raised:
        read_describe(stdout)
    assert str(raised.value).startswith("runner describe: ") and says in str(raised.value)


def test_setup_may_name_the_account_database_and_the_secrets_files_inside_the_state(tmp_path):
    assert read_setup("{}", tmp_path) == SetupAnswer(None, None, [])
    answer = {"account_db": str(tmp_path / "a.db"), "credentials": [str(tmp_path / "key")]}
    assert read_setup(json.dumps(answer), tmp_path) == SetupAnswer(tmp_path / "a.db", None, [tmp_path / "key"])
    answer = {"account_db": None, "account_dir": str(tmp_path / "account")}
    assert read_setup(json.dumps(answer), tmp_path) == SetupAnswer(None, tmp_path / "account", [])
    with pytest.raises(ProtocolError, match="field 'account_dir': expected a path inside the state directory"):
        read_setup(json.dumps({"account_dir": "/home/me"}), tmp_path)
    with pytest.raises(ProtocolError, match="field 'account_db': expected a path inside the state directory"):
        read_setup(json.dumps({"account_db": "/var/lib/a.db"}), tmp_path)
    with pytest.raises(ProtocolError, match="field 'credentials': expected a path inside the state directory"):
        read_setup(json.dumps({"credentials": ["/root/.key"]}), tmp_path)


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"argv": []}, "field 'argv': expected at least one entry"),
        ({"argv": ["opencode", 3]}, "field 'argv': expected a list of strings"),
        ({"env": None}, "field 'env': missing"),
        ({"env": {"HOME": 1}}, "field 'env': expected every value a string"),
        ({"checkout": "checkouts/a"}, "field 'checkout': expected an absolute path, got 'checkouts/a'"),
        ({"data": "/srv/shared.data"}, "field 'data': expected a path inside the state directory"),
        ({"tmp": "/tmp"}, "field 'tmp': expected a path inside the state directory"),
        ({"files": ["/etc/passwd"]}, "field 'files': expected a path inside the state directory"),
        ({"hooks": [["chmod", 7]]}, "field 'hooks': expected a list of argv lists"),
        ({"paths_inside": ["/workspace"]}, "field 'paths_inside': expected dict, got list"),
        ({"paths_inside": {"/srv/a": 3}}, "field 'paths_inside': expected a path for '/srv/a', got int 3"),
        ({"paths_inside": {"/srv/a": "workspace"}}, "expected absolute directories other than /"),
        ({"paths_inside": {"/srv/a": "/"}}, "expected absolute directories other than /"),
        ({"paths_inside": {"/srv/a": "/w", "/srv/b": "/w/"}}, "expected each inside path once, got /w for more"),
    ],
)
def test_a_bad_job_names_the_verb_and_the_field(tmp_path, changes, says):
    with pytest.raises(ProtocolError) as raised:
        read_job(json.dumps(job_answer(tmp_path, **changes)), "a", tmp_path)
    assert str(raised.value).startswith("runner create-job a: ") and says in str(raised.value)


def test_a_job_may_say_where_it_sees_the_host_directories_its_runner_binds_elsewhere(tmp_path):
    checkout = tmp_path / "checkouts" / "a"
    binds = {str(checkout): "/workspace", str(tmp_path / "checkouts" / "a.data"): "/job/data"}
    assert read_job(json.dumps(job_answer(tmp_path, paths_inside=binds)), "a", tmp_path).paths_inside == binds
    assert read_job(json.dumps(job_answer(tmp_path)), "a", tmp_path).paths_inside == {}


@pytest.mark.parametrize(
    ("host", "says"),
    [
        ("checkouts/b", "expected one of the job's own places or a directory in one"),
        ("accounts", "expected one of the job's own places or a directory in one"),
        ("", "expected no directory that holds STATE"),
        ("/dev/shm", "not a directory outside STATE"),
        ("/var/cache/shared", "not a directory outside STATE"),
    ],
)
def test_a_job_may_not_say_where_it_sees_what_is_not_its_own(tmp_path, host, says):
    """The map decides where boundary names a path to the job: one of another job's places mapped nowhere would
    send every attack on it nowhere, and so would a host-wide place (`/dev/shm` mapped to a path that is not there,
    while the container shares the host's: issue 43 item 4), so only the job's own places may be mapped."""
    answer = job_answer(tmp_path, paths_inside={str(tmp_path / host) if host else str(tmp_path.parent): "/w"})
    with pytest.raises(ProtocolError, match=says):
        read_job(json.dumps(answer), "a", tmp_path)


def test_a_path_that_climbs_out_of_the_state_is_outside_it(tmp_path):
    answer = job_answer(tmp_path, data=str(tmp_path / "checkouts" / ".." / ".." / "elsewhere"))
    with pytest.raises(ProtocolError, match="field 'data': expected a path inside the state directory"):
        read_job(json.dumps(answer), "a", tmp_path)


def test_a_checkout_that_is_not_there_is_refused(tmp_path):
    answer = job_answer(tmp_path, checkout=str(tmp_path / "never-made"))
    with pytest.raises(ProtocolError, match="field 'checkout': expected a directory after create-job"):
        read_job(json.dumps(answer), "a", tmp_path)


def fake_runner(tmp_path: Path, body: str) -> str:
    """A runner command written in Python, its verbs answered by `body` (a function `answer(verb, args)`)."""
    script = tmp_path / "runner.py"
    script.write_text(f"import json, os, sys\n{body}\nprint(json.dumps(answer(sys.argv[1], sys.argv[2:])))\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return shlex.join([sys.executable, str(script)])


def test_a_non_zero_exit_fails_with_what_the_runner_said(tmp_path):
    runner = fake_runner(tmp_path, "def answer(verb, args):\n    sys.exit('no state here: ' + verb)")
    with pytest.raises(ProtocolError, match=r"runner describe: expected exit 0, got 1 .*no state here: describe"):
        CommandRunner(runner)


def test_a_hang_fails_within_the_verbs_timeout(tmp_path, monkeypatch):
    monkeypatch.setitem(command.TIMEOUT_S, "describe", 0.5)
    runner = fake_runner(tmp_path, "import time\ndef answer(verb, args):\n    time.sleep(60)")
    with pytest.raises(ProtocolError, match=r"runner describe: expected the runner's describe .* within 0.5 s"):
        command.call(shlex.split(runner), "describe", (), {})


def test_a_command_that_does_not_exist_is_said_so():
    with pytest.raises(ProtocolError, match="runner describe: cannot start"):
        command.call(["/nonexistent/runner"], "describe", (), {})


GOOD_RUNNER = f"""
import subprocess
def answer(verb, args):
    state = os.environ.get("BOUNDARY_STATE", "")
    if verb == "describe":
        return {json.dumps(DESCRIBE)}
    if verb == "setup":
        return {{}}
    if verb == "create-job":
        checkout = os.path.join(state, "checkouts", args[0])
        subprocess.run(["git", "clone", "-q", os.path.join(os.path.dirname(state), "repos", "project.git"), checkout])
        home = {{"HOME": checkout + ".data"}}
        return {{"argv": ["/bin/true"], "env": home, "checkout": checkout, "data": checkout + ".data"}}
    subprocess.run(["rm", "-rf", os.path.join(state, "checkouts", args[0])])
    return {{}}
"""


def test_runner_check_asks_every_verb_of_a_good_runner(tmp_path):
    said: list[str] = []
    check_runner(fake_runner(tmp_path, GOOD_RUNNER), None, said.append)
    verbs = [line.split(":")[0] for line in said if not line.startswith("   ")]
    jobs = [f"ok {verb} {name}" for verb in ("create-job", "remove-job") for name in ("check-a", "check-a-b")]
    assert verbs == ["ok describe", "ok setup", *jobs]


FLAWED_RUNNER = """
import subprocess
def answer(verb, args):
    state = os.environ.get("BOUNDARY_STATE", "")
    if verb == "describe":
        return DESCRIBE
    if verb == "setup":
        with open(os.path.join(state, "secret"), "w") as kept:
            kept.write(os.environ["BOUNDARY_RUNNER_SECRET"])
        return {"credentials": [os.path.join(state, "secret")]}
    if verb == "create-job":
        checkout = os.path.join(state, "checkouts", args[0])
        subprocess.run(["git", "clone", "-q", os.path.join(os.path.dirname(state), "repos", "project.git"), checkout])
        secret = open(os.path.join(state, "secret")).read()
        return JOB(state, checkout, secret)
    return {}
"""


@pytest.mark.parametrize(
    ("describe", "job", "warned"),
    [
        (
            {},
            '{"argv": ["/bin/true"], "env": {"API_KEY": secret, "HOME": checkout + ".d"}, '
            '"checkout": checkout, "data": checkout + ".d"}',
            "the runner secret is in the job's view: env API_KEY",
        ),
        (
            {},
            '{"argv": ["/bin/true"], "env": {"HOME": checkout + ".d"}, "checkout": checkout, "data": checkout + ".d"}; '
            'open(os.path.join(checkout, ".env"), "w").write("KEY=" + secret)',
            "the runner secret is in the job's view: /",
        ),
        (
            {},
            '{"argv": ["/bin/true"], "env": {"HOME": checkout + ".d"}, '
            '"checkout": checkout, "data": os.path.join(state, "shared")}',
            "share their data directory",
        ),
        (
            {},
            '{"argv": ["/bin/true"], "env": {"HOME": os.path.join(state, "home")}, "checkout": checkout, '
            '"data": checkout + ".d"}',
            "share their HOME",
        ),
        (
            {},
            '{"argv": ["env", "opencode", "go"], "env": {"HOME": checkout + ".d"}, '
            '"checkout": checkout, "data": checkout + ".d"}',
            "argv runs opencode without run: it would wait for a terminal",
        ),
        (
            {"sandbox": "firejail"},
            '{"argv": ["/bin/true"], "env": {"HOME": checkout + ".d"}, "checkout": checkout, "data": checkout + ".d"}',
            "sandbox 'firejail' is none boundary knows and declares no startup_failures",
        ),
    ],
)
def test_runner_check_says_what_it_sees_is_wrong_without_an_agent(tmp_path, describe, job, warned):
    """Issue 29: `runner check` passed a runner that put the secret in the job's environment, one whose argv would
    wait for a terminal, and two jobs given one data directory. Each is now a warning line of its own."""
    job_function = f"def JOB(state, checkout, secret):\n    result = {job.split('; ')[0]}\n"
    job_function += "".join(f"    {line}\n" for line in job.split("; ")[1:]) + "    return result\n"
    body = f"DESCRIBE = {json.dumps(DESCRIBE | describe)}\n{job_function}{FLAWED_RUNNER}"
    said: list[str] = []
    warnings = check_runner(fake_runner(tmp_path, body), None, said.append)
    assert any(warned in warning for warning in warnings), warnings
    assert [line for line in said if line.startswith("warn ")] == [f"warn {w}" for w in warnings]


def test_a_layer_may_claim_what_boundary_knows_by_reference():
    """Issue 29: a command runner had to dig each agent's and sandbox's refusal texts out of its binary."""
    claims = {
        "denials": {"OS sandbox": "srt", "agent permission": ["boundary:agent", "my own words"]},
        "expected_tools": ["boundary:reference", "todowrite"],
        "forbidden_tools": ["boundary:reference"],
    }
    description = read_describe(json.dumps(DESCRIBE | claims))
    reference = runner(agent="opencode")
    assert description.denials["OS sandbox"] == OS_DENIALS
    assert description.denials["agent permission"] == (*reference.agent.denials["agent permission"], "my own words")
    assert description.expected_tools == reference.expected_tools() | {"todowrite"}
    assert description.forbidden_tools == reference.forbidden_tools()


@pytest.mark.parametrize("agent", ["opencode", "claude", "codex"])
def test_expected_tools_may_be_the_agents_default_set(agent):
    """Issue 29: the commonest runner starts its agent with its default tools; boundary knows them per pinned agent
    (a live test holds each set to what the agent really offers)."""
    claims = {"agent": agent, "expected_tools": ["boundary:agent-default", "my_tool"]}
    description = read_describe(json.dumps(DESCRIBE | claims))
    default_tools = knowledge.AGENTS[agent].default_tools
    assert description.expected_tools == default_tools | {"my_tool"}
    assert runner(agent=agent).expected_tools() < default_tools | {"Glob", "Grep"}


@pytest.mark.parametrize(
    ("claims", "says"),
    [
        ({"forbidden_tools": ["boundary:agent-default"]}, "boundary knows: boundary:reference"),
        ({"denials": {"OS sandbox": "firejail"}}, "layer 'OS sandbox': 'firejail' is no reference boundary knows"),
        ({"denials": {"OS sandbox": ["boundary:nope"]}}, "boundary knows: agent, srt, bwrap, claude, codex"),
        ({"expected_tools": ["boundary:defaults"]}, "boundary knows: boundary:reference, boundary:agent-default"),
    ],
)
def test_an_unknown_reference_names_the_ones_boundary_knows(claims, says):
    with pytest.raises(ProtocolError, match=re.escape(says)):
        read_describe(json.dumps(DESCRIBE | claims))


def test_runner_check_shows_what_each_reference_expanded_to_and_texts_two_layers_share(tmp_path):
    claims = {"denials": {"OS sandbox": "srt", "runner plugin": ["Permission denied", "my guard:"]}}
    body = GOOD_RUNNER.replace(json.dumps(DESCRIBE), json.dumps(DESCRIBE | claims))
    said: list[str] = []
    warnings = check_runner(fake_runner(tmp_path, body), None, said.append)
    assert "   layer 'OS sandbox': 'No such file or directory', 'Permission denied'" in "\n".join(said)
    assert any("layers 'OS sandbox' and 'runner plugin' both declare 'Permission denied'" in w for w in warnings)


def test_runner_check_warns_of_nothing_for_a_careful_runner(tmp_path):
    assert check_runner(fake_runner(tmp_path, GOOD_RUNNER), None, lambda _: None) == []


def test_each_call_gets_the_state_the_sandbox_asked_for_and_the_protocol_version(tmp_path):
    env = command.call_env("passthrough", tmp_path)
    assert env["BOUNDARY_STATE"] == str(tmp_path) and env["BOUNDARY_SANDBOX"] == "passthrough"
    assert env["BOUNDARY_PROTOCOL"] == str(protocol.VERSION)


def test_a_named_sandbox_keeps_what_boundary_knows_of_its_start_up_failures(tmp_path):
    runner = fake_runner(tmp_path, GOOD_RUNNER)
    command.describe.cache_clear()
    assert "Failed to create bridge sockets" in CommandRunner(runner).sandbox.startup_failures


@pytest.mark.parametrize(
    ("sandbox", "known"),
    [("bwrap", ("bwrap: ",)), ("none", ()), ("passthrough", ()), ("firejail", ())],
)
def test_any_sandbox_name_is_the_runners_and_its_own_texts_are_used_as_given(tmp_path, sandbox, known):
    """A name boundary knows adds its texts; any other name runs with the runner's startup_failures alone."""
    own = {"sandbox": sandbox, "startup_failures": ["my sandbox failed"]}
    runner = fake_runner(tmp_path, GOOD_RUNNER.replace(json.dumps(DESCRIBE), json.dumps(DESCRIBE | own)))
    command.describe.cache_clear()
    described = CommandRunner(runner).sandbox
    assert described.name == sandbox and described.startup_failures == (*known, "my sandbox failed")


@pytest.mark.parametrize("sandbox", ["bwrap", "none", "firejail"])
def test_the_live_suite_takes_a_runner_of_any_sandbox_name_past_its_preflight(tmp_path, sandbox):
    """`"sandbox": "bwrap"` stopped the run in the preflight with an INTERNALERROR ("unknown sandbox")."""
    body = GOOD_RUNNER.replace(json.dumps(DESCRIBE), json.dumps(DESCRIBE | {"sandbox": sandbox}))
    argv = [sys.executable, "-m", "pytest", *pytest_args(tmp_path), "--runner-cmd", fake_runner(tmp_path, body)]
    run = subprocess.run([*argv, "--co", "-q", "--scenario", "cross_job"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "INTERNALERROR" not in run.stdout + run.stderr, run.stdout[-3000:] + run.stderr
    assert f"cross_job-opencode-{sandbox}-" in run.stdout


@pytest.mark.parametrize("broad", ["boundary", "e", "BOUNDARY-", "probe-end"])
def test_a_denial_text_in_the_harnesss_own_wording_stops_the_run_before_any_job(tmp_path, broad):
    """Issue 28: a text as broad as a word of boundary's own would read the harness's words as a refusal."""
    denials = {"OS sandbox": ["No such file or directory", broad]}
    body = GOOD_RUNNER.replace(json.dumps(DESCRIBE), json.dumps(DESCRIBE | {"denials": denials}))
    argv = [sys.executable, "-m", "pytest", *pytest_args(tmp_path), "--runner-cmd", fake_runner(tmp_path, body)]
    run = subprocess.run([*argv, "--co", "-q"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 4, run.stdout[-2000:] + run.stderr[-2000:]
    assert f"layer 'OS sandbox' declares the denial text {broad!r}, which occurs in boundary's own wording" in (
        run.stderr
    )


def test_the_reference_runners_texts_are_none_of_the_harnesss_words():
    for agent in AGENTS:
        reference = runner(agent=agent)
        assert wording_problem(reference.name, reference.denials) is None


SCHEMA = ROOT / "docs" / "runner-protocol.schema.json"


def schema_errors(verb: str, answer: dict[str, Any]) -> list[str]:
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{verb}"})
    return [error.message for error in validator.iter_errors(answer)]


def test_the_published_schema_accepts_what_boundary_accepts(tmp_path):
    assert schema_errors("describe", DESCRIBE) == []
    references = {"OS sandbox": "srt", "agent permission": ["boundary:agent", "mine"]}
    assert schema_errors("describe", DESCRIBE | {"denials": references}) == []
    assert schema_errors("setup", {"account_db": str(tmp_path / "a.db")}) == []
    assert schema_errors("setup", {"account_db": None, "account_dir": str(tmp_path / "account")}) == []
    assert schema_errors("create-job", job_answer(tmp_path, tmp=str(tmp_path / "t"), files=[])) == []


@pytest.mark.parametrize(
    ("verb", "answer"),
    [
        ("describe", DESCRIBE | {"protocol": 2}),
        ("describe", DESCRIBE | {"denials": {}}),
        ("describe", DESCRIBE | {"denials": {"OS sandbox": "No such file"}}),
        ("describe", {k: v for k, v in DESCRIBE.items() if k != "expected_tools"}),
        ("create-job", {"argv": [], "env": {}, "checkout": "/s/c", "data": "/s/d"}),
        ("create-job", {"argv": ["x"], "env": {}, "checkout": "relative", "data": "/s/d"}),
    ],
)
def test_the_published_schema_refuses_what_boundary_refuses(verb, answer):
    assert schema_errors(verb, answer)


def test_the_schema_names_the_references_boundary_knows():
    schema = json.loads(SCHEMA.read_text())
    layer = schema["$defs"]["describe"]["properties"]["denials"]["additionalProperties"]
    assert tuple(layer["oneOf"][0]["enum"]) == knowledge.DENIAL_REFERENCES


def test_the_documented_all_but_in_bash_is_the_reference_runners_own():
    """docs/runner-protocol.md gives runner authors the "every job but this one" patterns in bash."""
    doc = (ROOT / "docs" / "runner-protocol.md").read_text()
    section = doc.split('## Deny rules for "every job but this one"')[1]
    function = section.split("```bash\n")[1].split("```")[0]
    for name in ("job-b", "job-a.data-a", "Check_A"):
        run = subprocess.run(["bash", "-c", f"{function}\nall_but /d {name}"], capture_output=True, text=True)
        assert run.stdout.splitlines() == [f"/d/{pattern}" for pattern in all_but(name)], name


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ('{"HOME": "/home/runner"}', "/home/runner/.config/opencode"),
        ("{}", "/root/.config/opencode"),  # no HOME: the agent's own default, the runner user's
        ('{"HOME": checkout + ".d", "XDG_CONFIG_HOME": "/etc/xdg"}', "/etc/xdg/opencode"),
    ],
)
def test_a_job_whose_agent_loads_its_configuration_from_outside_the_state_is_refused(tmp_path, env, named):
    """Issue 28, item 6: such files were listed, not attacked, and the group's verdict came from the rest. boundary
    rewrites configuring files only where it throws them away, so the job is refused with one line, before any
    agent starts."""
    job = f'{{"argv": ["/bin/true"], "env": {env}, "checkout": checkout, "data": checkout + ".d"}}'
    body = f"DESCRIBE = {json.dumps(DESCRIBE)}\ndef JOB(state, checkout, secret):\n    return {job}\n{FLAWED_RUNNER}"
    with pytest.raises(ProtocolError) as raised:
        check_runner(fake_runner(tmp_path, body), None, lambda _: None)
    assert f"create-job check-a: the agent would load its configuration from {named}" in str(raised.value)
    assert "outside STATE" in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("agent", ["opencode", "claude", "codex"])
def test_each_agents_configuration_directories_decide_the_refusal(tmp_path, agent):
    state = tmp_path / "state"
    inside = {"HOME": str(state / "home"), "CLAUDE_CONFIG_DIR": str(state / "c"), "CODEX_HOME": str(state / "x")}
    job = Job("a", JobPaths("a", state / "a", state / "a.d", state / "r", state / "t"), ["true"], inside)
    reference = runner(agent=agent)
    assert job.config_refused(reference.agent, state) is None
    own = {"opencode": "XDG_CONFIG_HOME", "claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME"}[agent]
    job.env[own] = "/srv/shared"
    assert "/srv/shared" in (job.config_refused(reference.agent, state) or "")


@pytest.mark.parametrize(
    ("agent", "tools", "planned_out"),
    [
        ("claude", ["Bash", "Edit", "Read", "Write", "Agent", "ToolSearch"], {"grep", "glob"}),  # its defaults, less
        ("opencode", ["bash", "edit", "glob", "grep", "read", "write"], set()),
        ("opencode", ["bash", "edit", "write"], {"read", "grep", "glob"}),
        ("codex", ["exec_command", "apply_patch"], set()),  # it has no read, grep or glob tool to leave out
    ],
)
def test_a_read_grep_or_glob_tool_the_runner_does_not_offer_leaves_the_plan(tmp_path, agent, tools, planned_out):
    """Issue 28, item 10: a runner that starts the agent with fewer tools (Claude Code with Grep and Glob deferred)
    made every cell of those tools INCONCLUSIVE, "the agent's tools do not match the script". The tools it declares
    (which the offered-tools check holds to what the model is sent) now plan them out, said as not offered."""
    from boundary.probes import CHANNELS, channels_for

    describe = DESCRIBE | {"agent": agent, "expected_tools": tools}
    runner_ = CommandRunner(fake_runner(tmp_path, f"def answer(verb, args):\n    return {describe!r}"))
    assert set(runner_.agent.not_offered) == planned_out
    assert set(runner_.agent.not_offered) <= runner_.agent.lacks
    kinds = {channel.kind for channel in channels_for(runner_.agent, CHANNELS)}
    assert not kinds & runner_.agent.lacks and "shell" in kinds


def test_a_scenarios_own_words_count_as_the_harnesss_wording():
    """The sweep's words reach the check through its `wording`, as an installed scenario's would."""
    from boundary.scenarios.sweep.search import SWEEP_END

    problem = wording_problem("r", {"OS sandbox": ("sweep-end",)})
    assert problem is not None and repr(SWEEP_END) in problem, problem
