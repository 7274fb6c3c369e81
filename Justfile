# boundary: live sandbox boundary tests for coding-agent runners.

set positional-arguments

# The project's virtual environment, made by scripts/setup.sh (PYTHON picks the interpreter it is made from).
bin := env_var_or_default("BOUNDARY_VENV", ".venv") / "bin"
python := bin / "python"

# List the recipes.
default:
    @just --list

# Set up (apt packages, .venv with the Python package and Node.js, pinned npm tools), then run every scenario against the runner, two at a time (`--runner-cmd "node my-runner.mjs"`: yours).
runner-sandbox *args: (setup-for args)
    {{python}} -m boundary.cli run "$@"

# Ask every verb of a runner command and validate its answers, in seconds, without starting an agent.
runner-check command *args:
    @bash scripts/setup.sh
    {{python}} -m boundary.cli runner check "$@"

# Run the harness's own tests: unit tests and the sabotaged-runner controls (in parallel). With no arguments, the
# fresh-root quick start runs after the rest, alone: it writes a whole root file system on this host, and a live
# sweep beside it had to walk and read all of it (it ran out of time on a busy 2-core host).
test *args:
    @bash scripts/setup.sh --dev
    if [ $# -gt 0 ]; then {{python}} -m pytest tests -n 2 "$@"; else {{python}} -m pytest tests -n 2 -m "not whole_root" --durations=30 && {{python}} -m pytest tests -m whole_root; fi

# What this host can run, and exactly why not (e.g. `just doctor --sandbox passthrough`, `--json`).
doctor *args: (setup-for args)
    {{python}} -m boundary.cli doctor "$@"

# Run the live suite N times (default 3) serially, then in parallel: wall time side by side, where it goes (`--load`: every core busy).
bench runs="3" *args: (setup-for args)
    {{python}} -m boundary.suite.bench "$@"

# Run the live suite N times (default 20); fails on the first that does not pass (a false alarm), keeping its evidence; `--load`: every core busy.
soak runs="20" *args: (setup-for args)
    {{python}} -m boundary.suite.bench --serial-only --no-floor "$@"

# Build the container example runners' job image (debootstrap, Debian packages only: the gVisor example's root, imported for podman; cached by its recipe's hash).
runner-image:
    @bash scripts/setup.sh --podman
    @bash examples/runners/podman/image.sh

# Lint and type-check.
check:
    @bash scripts/setup.sh --python
    {{python}} -m ruff check boundary scenarios tests conftest.py
    {{python}} -m ruff format --check boundary scenarios tests conftest.py
    {{python}} -m mypy
    {{bin}}/actionlint .github/workflows/*.yml examples/runner-repository/.github/workflows/*.yml
    {{python}} -m check_jsonschema --builtin-schema vendor.github-actions action.yml

# Install what boundary needs; quick when it is already there.
setup:
    @bash scripts/setup.sh

# Setup, plus a Docker engine and debootstrap when the arguments ask for `--host container`.
[private]
setup-for args:
    @bash scripts/setup.sh {{ if args =~ "container" { "--container" } else { "" } }}
