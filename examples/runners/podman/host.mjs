#!/usr/bin/env node
// What podman needs from this host, found before any job rather than learnt from 47 jobs that exit 126.
//
//   node host.mjs     print the plan for this host ("cgroups …; rlimits …; runtime …"), or the problem and exit 1
//
// Two things differ between hosts that users have and break a container's start:
// - The cgroup layout. crun (podman's default runtime on Debian and Ubuntu when installed) refuses a "hybrid" host
//   (cgroup v1 hierarchies, plus a cgroup2 one that holds controllers, e.g. hugetlb): "cgroups in hybrid mode not
//   supported", whatever --cgroups says. runc starts there. On v1 and on v2 either runtime starts.
// - Raising rlimits. podman as root asks for 1048576 open files and processes in the container; without
//   CAP_SYS_RESOURCE (a root in a container, some CI machines) the runtime's setrlimit fails with EPERM. The launcher
//   therefore gives the container its own limits (ulimit -S/-H), never more: see `ulimitArgs`.
import fs from "node:fs"
import { spawnSync } from "node:child_process"

const CAP_SYS_RESOURCE = 24

// The cgroup layout from /proc/self/mountinfo's text: "v1", "v2" or "hybrid", and the cgroup2 mount point (if any).
export function cgroupLayout(mountinfo) {
  const types = mountinfo
    .split("\n")
    .map((line) => line.split(" - "))
    .filter((halves) => halves.length === 2)
    .map(([left, right]) => ({ mountPoint: left.split(" ")[4], type: right.split(" ")[0] }))
  const unified = types.find(({ type }) => type === "cgroup2")
  const v1 = types.some(({ type }) => type === "cgroup")
  const mode = unified && v1 ? "hybrid" : unified ? "v2" : v1 ? "v1" : "none"
  return { mode, unified: unified?.mountPoint ?? null }
}

// Whether this process holds CAP_SYS_RESOURCE, from /proc/self/status's text (CapEff, hexadecimal).
export function canRaiseRlimits(status) {
  const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)
  return effective !== null && ((BigInt(`0x${effective[1]}`) >> BigInt(CAP_SYS_RESOURCE)) & 1n) === 1n
}

// The plan for a host: { runtime: null (podman's default) | "runc", notes } or { problem, fix }.
// `host`: { layout, controllers (those in the cgroup2 mount), rlimits (canRaiseRlimits), runc (on PATH) }.
export function planFor(host) {
  const { layout, controllers } = host
  const notes = [`cgroups ${layout.mode}${controllers.length ? ` (cgroup2 holds ${controllers.join(", ")})` : ""}`]
  notes.push(host.rlimits ? "rlimits: the launcher's own" : "rlimits: the launcher's own (no CAP_SYS_RESOURCE to raise them)")
  if (layout.mode === "none") {
    return { problem: "no cgroup file system is mounted (expected cgroup2 or cgroup v1 under /sys/fs/cgroup)", fix: "mount cgroups as the distribution does (systemd mounts them at boot)" }
  }
  if (layout.mode !== "hybrid" || !controllers.length) return { runtime: null, notes: [...notes, "runtime: podman's default"] }
  if (!host.runc) {
    return {
      problem: `crun refuses cgroups in hybrid mode with controllers in cgroup2 (here ${controllers.join(", ")} in ${layout.unified}), and runc, which starts there, is not installed`,
      fix: "apt-get install runc (or boot with systemd.unified_cgroup_hierarchy=1 for cgroup v2)",
    }
  }
  return { runtime: "runc", notes: [...notes, "runtime: runc (crun refuses hybrid cgroups with controllers in cgroup2)"] }
}

// This host, as planFor takes it.
export function thisHost() {
  const layout = cgroupLayout(fs.readFileSync("/proc/self/mountinfo", "utf8"))
  const controllersFile = layout.unified && `${layout.unified}/cgroup.controllers`
  const controllers = controllersFile && fs.existsSync(controllersFile) ? fs.readFileSync(controllersFile, "utf8").trim().split(/\s+/).filter(Boolean) : []
  const runc = spawnSync("sh", ["-c", "command -v runc"], { stdio: "ignore" }).status === 0
  return { layout, controllers, rlimits: canRaiseRlimits(fs.readFileSync("/proc/self/status", "utf8")), runc }
}

// The launcher's bash that gives the container the launcher's own limits: open files as they are, processes
// capped at the kernel's pid_max (no more can exist; podman itself runs with no more than that), "unlimited" too.
export function ulimitArgs() {
  return `pid_max=$(cat /proc/sys/kernel/pid_max)
capped() { if [ "$1" = unlimited ] || [ "$1" -gt "$pid_max" ]; then echo "$pid_max"; else echo "$1"; fi; }
args+=(--ulimit "nofile=$(ulimit -Sn):$(ulimit -Hn)" --ulimit "nproc=$(capped "$(ulimit -Su)"):$(capped "$(ulimit -Hu)")")`
}

if (import.meta.main) {
  const plan = planFor(thisHost())
  if (plan.problem) {
    console.error(`${plan.problem} — fix: ${plan.fix}`)
    process.exitCode = 1
  } else {
    console.log(plan.notes.join("; "))
  }
}
