"""The runner protocol's answers, read strictly: every field checked, every error naming verb and field.

docs/runner-protocol.md is the specification; docs/runner-protocol.schema.json its JSON Schema. A runner
that answers badly stops the run with one line saying what was expected, what was seen, and where.
"""

from __future__ import annotations

import os.path
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from boundary.runners import knowledge
from boundary.runners.fields import Fields, inside
from boundary.runners.fields import ProtocolError as ProtocolError  # the protocol's error, raised by every reader

VERSION = 1
AGENT_NAMES = ("opencode", "claude", "codex")
JOB_NAME = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Description:
    name: str
    agent: str
    sandbox: str
    sandbox_version: str
    startup_failures: tuple[str, ...]
    denials: dict[str, tuple[str, ...]]
    expected_tools: frozenset[str]
    forbidden_tools: tuple[str, ...]
    network_watch: str = "trace"  # how boundary watches jobs' network: "trace" (strace -f) or "packets"
    # layer -> the environment every verb gets to turn that layer off (`boundary run --layers each`)
    layer_off: dict[str, dict[str, str]] = field(default_factory=dict)


NETWORK_WATCHES = ("trace", "packets")


@dataclass(frozen=True)
class SetupAnswer:
    account_db: Path | None  # the account's database (SQLite), shared by its jobs
    account_dir: Path | None  # the directory of the account's shared files
    credentials: list[Path]  # the files that hold the runner secret


@dataclass(frozen=True)
class JobAnswer:
    argv: list[str]
    env: dict[str, str]
    checkout: Path
    data: Path
    tmp: Path | None
    runner_files: Path | None
    files: list[Path]
    hooks: list[list[str]]
    paths_inside: dict[str, str]  # host directory -> where the job sees it (a container's bind elsewhere)


def read_describe(stdout: str) -> Description:
    fields = Fields("describe", stdout)
    version = fields.get("protocol", int)
    if version != VERSION:
        raise fields.error(f"expected protocol version {VERSION}, got {version}", "protocol")
    agent = fields.string("agent")
    if agent not in AGENT_NAMES:
        raise fields.error(f"expected one of {', '.join(AGENT_NAMES)}, got {agent!r}", "agent")
    return Description(
        name=fields.string("name"),
        agent=agent,
        sandbox=fields.string("sandbox"),
        sandbox_version=fields.optional_string("sandbox_version") or "not given",
        startup_failures=tuple(fields.strings("startup_failures", [])),
        denials=_denials(fields, agent),
        expected_tools=frozenset(_tools(fields, "expected_tools", agent)),
        forbidden_tools=_tools(fields, "forbidden_tools", agent),
        network_watch=_network_watch(fields),
        layer_off=_layer_off(fields),
    )


def _layer_off(fields: Fields) -> dict[str, dict[str, str]]:
    """How each claimed layer is turned off: the environment variables the runner's verbs then get."""
    raw = fields.get("layer_off", dict, {})
    claimed = fields.get("denials", dict)
    off: dict[str, dict[str, str]] = {}
    for layer, env in raw.items():
        if layer not in claimed:
            raise fields.error(
                f"layer {layer!r} is not one the runner claims in `denials` ({', '.join(claimed)})", "layer_off"
            )
        if (
            not isinstance(env, dict)
            or not env
            or not all(isinstance(k, str) and k and isinstance(v, str) for k, v in env.items())
        ):
            raise fields.error(
                f"layer {layer!r}: expected a non-empty object of environment variables (name: "
                f"value), got {env!r:.120}",
                "layer_off",
            )
        off[layer] = dict(env)
    return off


def _network_watch(fields: Fields) -> str:
    watch = str(fields.get("network_watch", str, "trace"))
    if watch not in NETWORK_WATCHES:
        raise fields.error(f"expected one of {', '.join(NETWORK_WATCHES)}, got {watch!r}", "network_watch")
    return watch


def _denials(fields: Fields, agent: str) -> dict[str, tuple[str, ...]]:
    raw = fields.get("denials", dict)
    if not raw:
        raise fields.error("expected at least one layer: a runner that claims no layer shows no defence", "denials")
    denials: dict[str, tuple[str, ...]] = {}
    for layer, texts in raw.items():
        if isinstance(texts, str) and texts not in knowledge.DENIAL_REFERENCES:
            known = ", ".join(knowledge.DENIAL_REFERENCES)
            raise fields.error(
                f"layer {layer!r}: {texts!r} is no reference boundary knows ({known}); texts go in a list"
            )
        entries = [f"{knowledge.PREFIX}{texts}"] if isinstance(texts, str) else texts  # one reference, by its name
        if not isinstance(entries, list) or not entries or not all(isinstance(t, str) and t.strip() for t in entries):
            raise fields.error(
                f"layer {layer!r}: expected a reference ({', '.join(knowledge.DENIAL_REFERENCES)}) or a non-empty "
                f"list of non-empty strings, got {texts!r:.120}"
            )
        denials[layer] = tuple(dict.fromkeys(text for entry in entries for text in _texts(fields, layer, entry, agent)))
    return denials


def _texts(fields: Fields, layer: str, entry: str, agent: str) -> tuple[str, ...]:
    """A text as given, or the texts a `boundary:NAME` reference stands for."""
    if not entry.startswith(knowledge.PREFIX):
        return (entry,)
    texts = knowledge.denial_texts(entry.removeprefix(knowledge.PREFIX), agent)
    if texts is None:
        known = ", ".join(knowledge.DENIAL_REFERENCES)
        raise fields.error(f"layer {layer!r}: unknown reference {entry!r}; boundary knows: {known}", "denials")
    return texts


def _tools(fields: Fields, key: str, agent: str) -> tuple[str, ...]:
    """Tool names (or forbidden patterns), with `boundary:reference` standing for the reference runner's own."""
    found: list[str] = []
    for entry in fields.strings(key, nonempty=True) if key == "expected_tools" else fields.strings(key, []):
        names = knowledge.tool_names(entry, agent, forbidden=key == "forbidden_tools")
        if names is None:
            known = knowledge.TOOL_REFERENCES[: 1 if key == "forbidden_tools" else None]
            raise fields.error(f"unknown reference {entry!r}; boundary knows: {_prefixed(known)}", key)
        found += names
    return tuple(dict.fromkeys(found))


def _prefixed(names: tuple[str, ...]) -> str:
    return ", ".join(knowledge.PREFIX + name for name in names)


def read_setup(stdout: str, state: Path) -> SetupAnswer:
    """Where the account keeps what its jobs share (neither: nothing), and the files that hold the runner secret."""
    fields = Fields("setup", stdout)
    credentials = [inside(fields, "credentials", value, state) for value in fields.strings("credentials", [])]
    account_db, account_dir = (fields.optional_path(key, state) for key in ("account_db", "account_dir"))
    return SetupAnswer(account_db, account_dir, credentials)


def read_job(stdout: str, name: str, state: Path) -> JobAnswer:
    fields = Fields(f"create-job {name}", stdout)
    env = fields.get("env", dict)
    bad = {k: v for k, v in env.items() if not isinstance(v, str)}
    if bad:
        raise fields.error(f"expected every value a string, got {bad!r:.120}", "env")
    hooks = fields.get("hooks", list, [])
    if not all(isinstance(h, list) and h and all(isinstance(a, str) for a in h) for h in hooks):
        raise fields.error(f"expected a list of argv lists (strings), got {hooks!r:.120}", "hooks")
    answer = JobAnswer(
        argv=fields.strings("argv", nonempty=True),
        env=dict(env),
        checkout=fields.path("checkout", state),
        data=fields.path("data", state),
        tmp=fields.optional_path("tmp", state),
        runner_files=fields.optional_path("runner_files", state),
        files=[inside(fields, "files", value, state) for value in fields.strings("files", [])],
        hooks=hooks,
        paths_inside={},
    )
    if not answer.checkout.is_dir():
        raise fields.error(f"expected a directory after create-job, but {answer.checkout} is none", "checkout")
    return replace(answer, paths_inside=_paths_inside(fields, answer, state))


def _paths_inside(fields: Fields, job: JobAnswer, state: Path) -> dict[str, str]:
    """Each host directory the job sees elsewhere, and where: absolute paths, neither the root, each inside path
    given once, each one of the job's own places (or what is in them). The map decides where boundary names a path
    to the job: a map of another job's place could send every attack on it nowhere, and one of a directory outside
    STATE (`/dev/shm` mapped to a path that is not there, while the job shares the host's) would move the sweep's
    plants and searches there with no proof; the job's own places have their controls."""
    binds = fields.get("paths_inside", dict, {})
    own = [place for place in (job.checkout, job.data, job.tmp, job.runner_files) if place is not None]
    for host, seen in binds.items():
        if not isinstance(seen, str):
            raise fields.error(f"expected a path for {host!r}, got {type(seen).__name__} {seen!r:.80}", "paths_inside")
        for path in (host, seen):
            if not os.path.isabs(path) or os.path.normpath(path) == "/":
                wrong = f"expected absolute directories other than /, got {host!r}: {seen!r}"
                raise fields.error(wrong, "paths_inside")
    normal = [os.path.normpath(seen) for seen in binds.values()]
    twice = sorted({seen for seen in normal if normal.count(seen) > 1})
    if twice:
        raise fields.error(f"expected each inside path once, got {', '.join(twice)} for more than one", "paths_inside")
    for host in binds:
        problem = _not_own(Path(os.path.normpath(host)), own, Path(os.path.normpath(state)))
        if problem:
            raise fields.error(f"{host}: {problem}", "paths_inside")
    return dict(binds)


def _not_own(host: Path, own: list[Path], state: Path) -> str | None:
    if state.is_relative_to(host):
        return f"expected no directory that holds STATE ({state}): a job that sees it sees every other job's places"
    if not any(host.is_relative_to(os.path.normpath(place)) for place in own):
        places = ", ".join(str(place) for place in own)
        where = "another part of STATE" if host.is_relative_to(state) else "a directory outside STATE"
        return (
            f"expected one of the job's own places or a directory in one ({places}), not {where}: boundary names "
            "every other path to the job as the host has it, and a map of it would move its attacks there unproven"
        )
    return None


def read_empty(verb: str, stdout: str) -> None:
    Fields(verb, stdout)  # an object; what it holds is the runner's own
