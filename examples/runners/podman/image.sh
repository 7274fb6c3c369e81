#!/bin/bash
# Build the container examples' job image, once: a Debian root file system made by debootstrap from Debian
# packages only (no registry is needed), kept as a directory (the gVisor example's root) and imported into a
# podman store of its own (the podman example's image) when podman is installed. Both are named by a hash of the
# recipe (suite, packages, RECIPE), so a change to it builds anew; what exists is reused.
#
#   bash image.sh              build what is missing and print the image's tag
#   bash image.sh --tag        print the tag only
#   bash image.sh --check      print "TAG STORE" and exit 0 when the podman image is built; exit 1, saying how, when not
#   bash image.sh --rootfs     print the root file system's directory and exit 0 when built; exit 1, saying how, when not
#
# Both live in boundary's cache (podman/ in ~/.cache/boundary): jobs use the podman store read-only as an
# additional image store and the directory as a read-only root; nothing of it goes to the host's /run.
# The agent itself is not in the image: the runners bind the pinned opencode executable read-only at each
# start, so jobs run exactly the version under test.
set -euo pipefail

SUITE=bookworm
# What a job's agent and shell need: a shell and coreutils (minbase), git (opencode names a project by its
# root commit), ripgrep (opencode's grep and glob tools; without it opencode downloads one, and hangs offline),
# socat (the bridge from the container's loopback to the model's socket), python3 (what a job's tools commonly
# run, and the client boundary's reach scenario runs in the job's shell), busybox (the gVisor example's `ls` and
# `stat`: gVisor 20221219 refuses the statx flag AT_NO_AUTOMOUNT that coreutils' pass, "Invalid argument").
PACKAGES=git,ripgrep,socat,python3,ca-certificates,procps,busybox
RECIPE=1  # raise it when a change below makes a different image

recipe=$(printf '%s %s %s' "$SUITE" "$PACKAGES" "$RECIPE" | sha256sum | cut -c1-12)
tag="localhost/boundary-podman-job:$recipe"
if [ "${1:-}" = "--tag" ]; then echo "$tag"; exit 0; fi

need() { command -v "$1" >/dev/null || { echo "image.sh: expected $1 on PATH. Fix: apt-get install $1" >&2; exit 1; }; }
home=${BOUNDARY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boundary}/podman  # boundary's cache, wherever it is
rootfs=$home/rootfs-$recipe
if [ "${1:-}" = "--rootfs" ]; then
  if [ -e "$rootfs.complete" ]; then echo "$rootfs"; exit 0; fi
  echo "image.sh: the job root file system $rootfs is not built. Build it: bash $0" >&2; exit 1
fi
store=$home/storage
mkdir -p "$home/run" "$home/tmp"
printf '[storage]\ndriver = "overlay"\ngraphroot = "%s"\nrunroot = "%s"\n' "$store" "$home/run" >"$home/storage.conf"
printf '[engine]\nevents_logger = "none"\ntmp_dir = "%s"\nlock_type = "file"\n[network]\nnetwork_config_dir = "%s"\n' \
  "$home/tmp" "$home/networks" >"$home/containers.conf"  # its network lock, too, in the cache, not in /etc
export CONTAINERS_STORAGE_CONF="$home/storage.conf" CONTAINERS_CONF="$home/containers.conf"
# podman's network code still makes /run/containers/networks: as root, podman runs with a /run of its own.
podman() {
  if [ "$(id -u)" -ne 0 ]; then command podman "$@"; return; fi
  unshare --mount --propagation private bash -c 'mount -t tmpfs podman-run /run && exec podman "$@"' podman "$@"
}
if [ "${1:-}" = "--check" ]; then
  need podman
  if podman image exists "$tag"; then echo "$tag $store"; exit 0; fi
  echo "image.sh: the job image $tag is not built. Build it: bash $0" >&2; exit 1
fi
# The root file system, once: debootstrap into a work directory beside the store (not in /tmp: debootstrap makes
# device nodes, which a nodev /tmp refuses), moved into place whole, then marked complete.
build_rootfs() {
  need debootstrap
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
  rm -rf "$rootfs" && mv "$work/root" "$rootfs" && touch "$rootfs.complete"
}

[ -e "$rootfs.complete" ] || build_rootfs
if command -v podman >/dev/null && ! podman image exists "$tag"; then
  tar -C "$rootfs" -c . | podman import --quiet - "$tag" >/dev/null
fi
echo "$tag"
