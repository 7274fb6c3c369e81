"""Which runners a run attacks: `--runner` (a class or factory, by `module:name`), `--runner-cmd` (a runner that is
a command), `--agent` and `--sandbox`, and `--layer-alone` (each runner with every other claimed layer off)."""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import cast

import pytest

from boundary.runners import AGENTS
from boundary.runners.command import CommandRunner
from boundary.runners.contract import LayersOff, Runner
from boundary.runners.hosted import HostedRunner
from boundary.runners.protocol import ProtocolError
from boundary.suite.options import DEFAULT_RUNNER


def load_runners(
    spec: str, sandbox: str | None, agents: str | None, command: str | None = None
) -> list[Callable[[], Runner]]:
    """One runner factory per agent asked for (`--agent a,b`), or the runner's own agent; or the runner command."""
    if command is not None:
        return [load_command_runner(command, sandbox, agents)]
    if agents is None and spec == DEFAULT_RUNNER:
        agents = ",".join(AGENTS)  # the reference runners: every agent, side by side
    names = [name.strip() for name in agents.split(",") if name.strip()] if agents else [None]
    unknown = [name for name in names if name is not None and name not in AGENTS]
    if unknown:
        raise pytest.UsageError(f"--agent {agents}: unknown agent {', '.join(unknown)}; expected any of {AGENTS}")
    return [load_runner(spec, sandbox, name) for name in dict.fromkeys(names)]


def load_runner(spec: str, sandbox: str | None, agent: str | None) -> Callable[[], Runner]:
    """A factory of fresh runners: each scenario sets up its own state, so each gets its own runner."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise pytest.UsageError(f"--runner expects MODULE:ATTR (e.g. {DEFAULT_RUNNER}), got {spec!r}")
    kwargs: dict[str, str] = {"sandbox": sandbox} if sandbox else {}
    try:
        factory = getattr(importlib.import_module(module_name), attr)
        if agent and "agent" in inspect.signature(factory).parameters:
            kwargs["agent"] = agent
        runner = factory(**kwargs)
    except (ImportError, AttributeError, ValueError, TypeError) as error:
        raise pytest.UsageError(f"--runner {spec}: cannot build a runner with {kwargs}: {error}") from error
    if not isinstance(runner, Runner):
        raise pytest.UsageError(f"--runner {spec}: {runner!r} does not implement boundary.runners.Runner")
    if agent and runner.agent.name != agent:
        raise pytest.UsageError(
            f"--runner {spec} runs {runner.agent.name} jobs, not {agent}: drop --agent, or give a runner of {agent}"
        )
    return lambda: HostedRunner(factory, kwargs)  # its verbs on the host its jobs run on, as a command's


def load_command_runner(command: str, sandbox: str | None, agents: str | None) -> Callable[[], Runner]:
    """A factory of runners driven through `command`; its answer to `describe` is checked now, once."""
    try:
        runner = CommandRunner(command, sandbox)
    except ProtocolError as error:
        raise pytest.UsageError(
            f"--runner-cmd {command}: {error}\n(`boundary runner check` checks every verb)"
        ) from None
    if agents and agents.strip() != runner.agent.name:
        raise pytest.UsageError(
            f"--runner-cmd {command} runs {runner.agent.name} jobs (its describe), not {agents}: drop --agent, "
            "or give it a runner of that agent"
        )
    return lambda: CommandRunner(command, sandbox)


def with_layer_alone(factories: list[Callable[[], Runner]], layer: str) -> list[Callable[[], Runner]]:
    """The factories of the runners that claim `layer`, each making runners with every other claimed layer off; a
    runner that cannot turn one off stops the run, saying which and why."""
    kept: list[Callable[[], Runner]] = []
    for make_runner in factories:
        runner = make_runner()
        if layer not in runner.denials:
            continue  # its agent's jobs have no such layer: nothing of it to run alone
        others = frozenset(runner.denials) - {layer}
        cannot = runner.cannot_turn_off() if isinstance(runner, LayersOff) else dict.fromkeys(others, "no switches")
        stuck = {other: why for other, why in cannot.items() if other in others}
        if stuck:
            said = "; ".join(f"{other}: {why}" for other, why in stuck.items())
            raise pytest.UsageError(
                f"--layer-alone {layer}: runner {runner.name} ({runner.agent.name}) cannot turn off {said}. Fix: "
                "give each claimed layer a `layer_off` in its describe (docs/runner-protocol.md#describe)"
            )
        kept.append(functools.partial(_turned_off, make_runner, others))
    if not kept:
        raise pytest.UsageError(f"--layer-alone {layer}: no runner of this run claims a layer {layer!r}")
    return kept


def _turned_off(make_runner: Callable[[], Runner], layers: frozenset[str]) -> Runner:
    runner = make_runner()
    cast(LayersOff, runner).turn_off(layers)
    return runner
