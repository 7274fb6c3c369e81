"""`boundary` command line: tools, versions, and reading a run's report."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from boundary.ci.github import GitHub, GitHubError
from boundary.doctor import checks as doctor
from boundary.host import HOST_MODES
from boundary.host.base import HostError
from boundary.host.image import ensure_image
from boundary.host.resolved import resolved_root
from boundary.jobs.first_job import JobDoesNotStart, start_one
from boundary.report.compare import FAIL_ON, compare_with
from boundary.report.markdown import to_comment
from boundary.report.merge import MergeError, merge_files
from boundary.report.passrule import Report, exit_status
from boundary.report.record import load
from boundary.report.renderings import RENDERINGS, show, stdout_to_nowhere, write_each
from boundary.report.view import verdict_line
from boundary.runners import init as runner_init
from boundary.runners.check import check_runner
from boundary.runners.protocol import ProtocolError
from boundary.suite.launch import layers_option, run_help, run_layers_each, run_suite
from boundary.toolchain import tools


def _tools_install(_: argparse.Namespace) -> int:
    for prefix in tools.install_all():
        print(f"[boundary] pinned npm tools ready: {prefix}")
    try:
        print(f"[boundary] systemd-resolved for the namespace host (extracted, not installed): {resolved_root()}")
    except HostError as error:  # not fatal here: `--host live` needs none of it; the live suite says the same
        print(f"boundary: warning: --host namespace cannot boot until this is fixed: {error}", file=sys.stderr)
    return 0


def _tools_image(_: argparse.Namespace) -> int:
    try:
        print(f"[boundary] container host image ready: {ensure_image()}")
    except HostError as error:
        print(f"boundary: {error}", file=sys.stderr)
        return 2
    return 0


def _tools_versions(_: argparse.Namespace) -> int:
    for name in tools.PACKAGES:
        print(f"{name} {tools.version(name)}")
    print(f"node {tools.node()}")
    return 0


def _doctor(args: argparse.Namespace) -> int:
    os.environ[tools.SOURCE_ENV] = args.tools
    checks = doctor.run_checks(args.sandbox, args.host, examples=True)
    if args.json:
        print(json.dumps([vars(check) for check in checks], indent=2))
    else:
        print("\n".join(doctor.format_checks(checks)))
    return 0 if all(check.ok for check in checks) else 1


def _report(args: argparse.Namespace) -> int:
    """Write each rendering asked for, print the one --format names (else the verdict line); exit 1 on FAIL. The
    status is the verdict's, decided before anything is printed: a reader that goes away (`| head`) changes what it
    saw, never the status (a failing report still exits 1, a passing one 0)."""
    try:
        report = _read_report(args)
    except (MergeError, OSError, ValueError) as error:
        print(f"boundary: {error}", file=sys.stderr)
        return 2
    status = exit_status(report)
    write_each(report, {name: Path(out) for name in RENDERINGS if (out := getattr(args, name))})
    show(RENDERINGS[args.format].render(report) if args.format else verdict_line(report) + "\n")
    return status


def _read_report(args: argparse.Namespace) -> Report:
    """The report named, or the shards merged (`--merge`); compared with a base report (`--against`)."""
    if bool(args.path) == bool(args.merge):
        raise ValueError(
            "expected one JSON report, or the shards' reports after --merge; got "
            + ("both" if args.path else "neither")
        )
    if args.fail_on and not args.against:
        raise ValueError("--fail-on compares with a base report: give it with --against BASE.json")
    report = merge_files([Path(p) for p in args.merge]) if args.merge else load(Path(args.path))
    if args.against:
        report["comparison"] = compare_with(Path(args.against), report, args.fail_on)
    return report


def _ci_base_report(args: argparse.Namespace) -> int:
    """The base branch's newest report into --out; where there is none, or GitHub refuses, one line why, and exit 0:
    the run then says it compared nothing, and goes on."""
    try:
        github = GitHub.from_environment(args.repo)
        artifact = github.newest_artifact(args.artifact, args.branch)
        if artifact is None:
            print(
                f"no base report: no unexpired artifact {args.artifact} from branch {args.branch} (a first run, or "
                "expired): nothing to compare with"
            )
            return 0
        data = github.artifact_file(artifact, args.member)
    except GitHubError as error:
        print(f"no base report: {error}")
        return 0
    Path(args.out).write_bytes(data)
    run = artifact.get("workflow_run") or {}
    print(
        f"base report: {args.member} of artifact {args.artifact} from {args.branch} (run {run.get('id')}, "
        f"{artifact.get('created_at')}) in {args.out}"
    )
    return 0


def _ci_comment(args: argparse.Namespace) -> int:
    try:
        report = load(Path(args.report))
        done = GitHub.from_environment(args.repo).keep_comment(args.pr, to_comment(report, args.link))
    except (GitHubError, OSError, ValueError) as error:
        print(f"boundary: {error}", file=sys.stderr)
        return 1
    print(f"boundary's comment on pull request #{args.pr}: {done}")
    return 0


def _runner_check(args: argparse.Namespace) -> int:
    os.environ[tools.SOURCE_ENV] = args.tools
    start = None if args.no_job else start_one
    try:
        warnings = check_runner(args.command_line, args.sandbox, print, start)
    except (ProtocolError, JobDoesNotStart, HostError) as error:
        print(f"boundary: {error}", file=sys.stderr)
        return 1
    started = "" if args.no_job else ", and its job starts and answers the model"
    print(f"PASS — the runner answers every verb as docs/runner-protocol.md asks{started}")
    if args.no_job:
        print("(--no-job: no job was started; whether the runner's jobs start on this host is not known)")
    if warnings:  # not protocol errors: the live suite judges them, and fails the run on what they let through
        print(f"{len(warnings)} warning(s) above: what the live suite would find the slow way, or could not judge")
    return 0


def _runner_init(args: argparse.Namespace) -> int:
    try:
        written = runner_init.init(args.agent, args.lang, args.directory, args.force)
    except runner_init.InitError as error:
        print(f"boundary: {error}", file=sys.stderr)
        return 2
    print("wrote " + ", ".join(str(path) for path in written))
    template = runner_init.template_for(args.agent, args.lang)
    print(f"next, in {args.directory}: `just runner-check` (seconds, no agent), `just runner-sandbox` (the live")
    print(f"suite, as root), then make the runner yours; boundary starts it as `{template.command}`. In")
    print(f"{runner_init.WORKFLOW}, replace OWNER/boundary@main with where you get boundary from.")
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="boundary", description="Live sandbox boundary test harness")
    commands = root.add_subparsers(dest="command", required=True)
    tools_parser = commands.add_parser("tools", help="the pinned npm tools (agents, sandboxes)")
    tools_commands = tools_parser.add_subparsers(dest="tools_command", required=True)
    tools_commands.add_parser("install", help="install from the committed lockfiles (quick when done)").set_defaults(
        func=_tools_install
    )
    tools_commands.add_parser(
        "image", help="build the container host's image (debootstrap + docker import; quick when built)"
    ).set_defaults(func=_tools_image)
    tools_commands.add_parser("versions", help="print the installed versions").set_defaults(func=_tools_versions)
    check = commands.add_parser("doctor", help="what this host can run, and exactly why not; exit 1 on a problem")
    check.add_argument(
        "--sandbox",
        default="srt",
        help="the sandbox the live suite will use, by the name a runner's describe gives (default: srt): srt, claude, "
        "codex and bwrap get their own checks, passthrough and none none, any other name what every sandbox needs",
    )
    check.add_argument("--host", default="namespace", choices=HOST_MODES, help="where jobs will run")
    check.add_argument("--json", action="store_true", help="machine-readable output")
    check.add_argument(
        "--tools",
        default=os.environ.get(tools.SOURCE_ENV, "npm"),
        choices=tools.SOURCES,
        help="where the agent, sandbox and node come from: npm lockfiles (default) or PATH",
    )
    check.set_defaults(func=_doctor)
    report = commands.add_parser(
        "report",
        help="render a JSON report, or the shards of a CI matrix merged, compared with a base report; exit 1 if "
        "the run failed",
    )
    report.add_argument("path", nargs="?", help="the run's JSON report (--boundary-report; reports/*.json)")
    report.add_argument("--merge", nargs="+", metavar="SHARD.json", help="join these shards' reports into one")
    report.add_argument(
        "--against", metavar="BASE.json", help="compare with an earlier run's report: weaker, stronger, moved"
    )
    report.add_argument("--fail-on", choices=FAIL_ON, help="with --against: exit 1 on any change weaker than the base")
    for name, rendering in RENDERINGS.items():
        report.add_argument(f"--{name}", metavar="OUT", help=f"write {rendering.what} to OUT")
    report.add_argument("--format", choices=RENDERINGS, help="print this rendering instead of the verdict line")
    report.set_defaults(func=_report)
    run = commands.add_parser(
        "run",
        help="run the live suite (reports into ./reports/); every option after `run` goes to it, e.g. "
        '--runner-cmd "node my-runner.mjs", --agent, --scenario, --host (`boundary run --help` lists them)',
        add_help=False,
    )
    run.add_argument("suite_options", nargs=argparse.REMAINDER)  # taken whole by main(): they are pytest's
    ci = commands.add_parser("ci", help="what boundary's GitHub Action asks of GitHub (docs/ci.md)")
    ci_commands = ci.add_subparsers(dest="ci_command", required=True)
    base = ci_commands.add_parser(
        "base-report", help="the newest report artifact of a branch (needs actions: read); none: one line, exit 0"
    )
    base.add_argument("--branch", required=True, help="the base branch, e.g. main")
    base.add_argument("--out", required=True, help="where to write the report")
    base.add_argument("--artifact", default="boundary-reports", help="the artifact's name (default: boundary-reports)")
    base.add_argument("--member", default="runner-sandbox.json", help="the report's file name in the artifact")
    base.add_argument("--repo", help="OWNER/NAME (default: $GITHUB_REPOSITORY)")
    base.set_defaults(func=_ci_base_report)
    comment = ci_commands.add_parser(
        "comment", help="the pull request's one boundary comment: the verdict and the comparison, kept current"
    )
    comment.add_argument("--report", required=True, help="the run's JSON report (with its comparison)")
    comment.add_argument("--pr", type=int, required=True, help="the pull request's number")
    comment.add_argument("--link", default="", help="the run's address, linked from the comment")
    comment.add_argument("--repo", help="OWNER/NAME (default: $GITHUB_REPOSITORY)")
    comment.set_defaults(func=_ci_comment)
    runner = commands.add_parser("runner", help="a runner command (docs/runner-protocol.md)")
    runner_commands = runner.add_subparsers(dest="runner_command", required=True)
    check_parser = runner_commands.add_parser(
        "check", help="ask every verb, validate every answer, start one job (seconds; as root, as a run)"
    )
    check_parser.add_argument("command_line", metavar="COMMAND", help='the runner command, e.g. "node my-runner.mjs"')
    check_parser.add_argument("--sandbox", help="ask for this sandbox instead of the runner's own (BOUNDARY_SANDBOX)")
    check_parser.add_argument(
        "--no-job", action="store_true", help="only the verbs: start no job (whether its jobs start is then unknown)"
    )
    check_parser.add_argument(
        "--tools", default=os.environ.get(tools.SOURCE_ENV, "npm"), choices=tools.SOURCES, help="as `boundary run`'s"
    )
    check_parser.set_defaults(func=_runner_check)
    init_parser = runner_commands.add_parser(
        "init", help="write a runner to start from (boundary's example), its Justfile recipes and CI workflow"
    )
    init_parser.add_argument("--agent", required=True, choices=runner_init.AGENTS, help="the agent its jobs run")
    init_parser.add_argument(
        "--lang", choices=runner_init.LANGUAGES, help="its language (default: the one boundary has it in)"
    )
    init_parser.add_argument("--force", action="store_true", help="overwrite files of the same names")
    init_parser.add_argument("directory", nargs="?", default=".", type=Path, help="where (default: here)")
    init_parser.set_defaults(func=_runner_init)
    return root


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except BrokenPipeError:
        # `boundary … | head`: the reader went away while the command was still printing, before it returned its
        # status (those that decide a verdict print with `show`, and keep theirs). A command cut off is no pass.
        stdout_to_nowhere()
        return 1


def _main(argv: list[str]) -> int:
    if argv[:1] == ["run"]:
        if {"-h", "--help"} & set(argv[1:]):
            return run_help(argv[1:])
        options, layers = layers_option(argv[1:])
        if layers is None:
            return run_suite(options)
        if layers != "each":
            print(f"boundary: --layers: expected `each`, got {layers!r}", file=sys.stderr)
            return 2
        return run_layers_each(options)
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except tools.ToolsError as error:
        print(f"boundary: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
