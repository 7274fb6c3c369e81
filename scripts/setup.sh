#!/usr/bin/env bash
# Install what boundary needs, idempotently: apt packages, the Python package, the pinned npm tools.
# Quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(bubblewrap socat ripgrep iproute2 strace git nodejs npm util-linux dbus dnsmasq-base acl libsystemd-shared)
# --container: what `--host container` needs (a Docker engine, debootstrap to build the host image).
# --dev: what the harness's own tests need besides: the container host, flake.nix parsing, the HTML report.
CONTAINER=""
case "${1:-}" in
  --container) CONTAINER=1; APT_PACKAGES+=(docker.io debootstrap) ;;
  --dev) CONTAINER=1; APT_PACKAGES+=(docker.io debootstrap nix-bin chromium) ;;
esac
missing=()
# In a Nix dev shell (flake.nix) or without dpkg, the system packages come from elsewhere.
[ -n "${IN_NIX_SHELL:-}" ] || ! command -v dpkg-query >/dev/null && APT_PACKAGES=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
# nodejs may come from elsewhere (nodesource, nvm): accept a node >= 20 on PATH instead of the packages.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
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

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -I -c 'import boundary, pathlib, sys; sys.exit(pathlib.Path(boundary.__file__).parent.parent != pathlib.Path.cwd())' 2>/dev/null \
   || ! command -v just >/dev/null; then
  echo "[setup] pip install -e .[dev]"
  "$PYTHON" -m pip install -q --disable-pip-version-check -e '.[dev]'
fi

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
