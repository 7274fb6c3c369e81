#!/bin/bash
# Build the podman example runner's job image, once: a Debian root file system made by debootstrap from
# Debian packages only (no registry is needed), imported into a podman store of its own. The tag carries a hash
# of the recipe (suite, packages, RECIPE), so a change to it builds a new image; an image that exists is reused.
#
#   bash image.sh            build (if missing) and print the image's tag
#   bash image.sh --tag      print the tag only
#   bash image.sh --check    print "TAG STORE" and exit 0 when the image is built; exit 1, saying how, when not
#
# The image lives in a podman store of its own (STORE: podman/ in boundary's cache, ~/.cache/boundary), which jobs
# use read-only as an additional image store; nothing of it goes to the host's /run.
# The agent itself is not in the image: the runner binds the pinned opencode executable read-only at each
# start, so jobs run exactly the version under test.
set -euo pipefail

SUITE=bookworm
# What a job's agent and shell need: a shell and coreutils (minbase), git (opencode names a project by its
# root commit), ripgrep (opencode's grep and glob tools; without it opencode downloads one, and hangs offline),
# socat (the bridge from the container's loopback to the model's socket), python3 (what a job's tools commonly
# run, and the client boundary's reach scenario runs in the job's shell).
PACKAGES=git,ripgrep,socat,python3,ca-certificates,procps
RECIPE=1  # raise it when a change below makes a different image

tag="localhost/boundary-podman-job:$(printf '%s %s %s' "$SUITE" "$PACKAGES" "$RECIPE" | sha256sum | cut -c1-12)"
if [ "${1:-}" = "--tag" ]; then echo "$tag"; exit 0; fi

need() { command -v "$1" >/dev/null || { echo "image.sh: expected $1 on PATH. Fix: apt-get install $1" >&2; exit 1; }; }
need podman
home=${BOUNDARY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boundary}/podman  # boundary's cache, wherever it is
store=$home/storage
mkdir -p "$home/run" "$home/tmp"
printf '[storage]\ndriver = "overlay"\ngraphroot = "%s"\nrunroot = "%s"\n' "$store" "$home/run" >"$home/storage.conf"
printf '[engine]\nevents_logger = "none"\ntmp_dir = "%s"\nlock_type = "file"\n' "$home/tmp" >"$home/containers.conf"
export CONTAINERS_STORAGE_CONF="$home/storage.conf" CONTAINERS_CONF="$home/containers.conf"
# podman's network code still makes /run/containers/networks: as root, podman runs with a /run of its own.
podman() {
  if [ "$(id -u)" -ne 0 ]; then command podman "$@"; return; fi
  unshare --mount --propagation private bash -c 'mount -t tmpfs podman-run /run && exec podman "$@"' podman "$@"
}
if podman image exists "$tag"; then
  if [ "${1:-}" = "--check" ]; then echo "$tag $store"; else echo "$tag"; fi
  exit 0
fi
if [ "${1:-}" = "--check" ]; then echo "image.sh: the job image $tag is not built. Build it: bash $0" >&2; exit 1; fi
need debootstrap
# Beside the store, not in /tmp: debootstrap makes device nodes, which a nodev /tmp (a tmpfs) refuses.
work=$(mktemp -d -p "$home" build.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The mirror apt already uses here (one-line or deb822 sources), else Debian's own.
mirror=$(sed -nE 's#^(deb|URIs:)[[:space:]]+(\S+/debian)/?([[:space:]].*)?$#\2#p' \
  /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 || true)
mirror=${mirror:-http://deb.debian.org/debian}

echo "image.sh: debootstrap $SUITE from $mirror into $work (a minute or two, once)" >&2
if ! debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$work/root" "$mirror" >"$work/log" 2>&1; then
  tail -20 "$work/log" >&2
  echo "image.sh: expected debootstrap of $SUITE from $mirror to succeed (log above). Fix: check the mirror" >&2
  exit 1
fi
rm -rf "$work/root/var/cache/apt/archives"/*.deb "$work/root/var/lib/apt/lists"/*
tar -C "$work/root" -c . | podman import --quiet - "$tag" >/dev/null
echo "$tag"
