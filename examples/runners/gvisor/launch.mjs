#!/usr/bin/env node
// The gVisor example's launcher: start one job's agent in a gVisor sandbox of its own, and wait for it.
//
//   node launch.mjs JOB.json AGENT_ARGV...
//
// JOB.json is written by runner.mjs at create-job (read-only to the job). At each start the launcher writes the
// sandbox's OCI spec (what the project carries for agents, and .git, hidden or read-only as they are *now*: a
// job may have made them since), runs `runsc run` in the job's own network namespace, and removes what it made.
import { spawn, spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"

const [jobFile, ...agentArgv] = process.argv.slice(2)
const job = JSON.parse(fs.readFileSync(jobFile, "utf8"))
const RUNSC = ["runsc", "--root", job.runscRoot]
// The ptrace platform (this host has no other); the runner's network (`none`: a stack of the sandbox's own with
// loopback only), and connections to the host's unix sockets bound in (the model's bridge: the only one); no
// cgroups of the host's.
const SANDBOX = ["--platform=ptrace", `--network=${job.network}`, "--host-uds=open", "--ignore-cgroups"]

const bind = (from, to, mode) => ({ destination: to, type: "bind", source: from, options: ["rbind", mode] })
const tmpfs = (to, mode = "0755") => ({ destination: to, type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", `mode=${mode}`] })

// The project's agent files hidden, its other protected files read-only; an absent one kept from being made (its
// mount point, made in the checkout, is removed when the job ends). As ../podman/runner.mjs's launcher does.
function protectedMounts() {
  const mounts = []
  const made = []
  for (const relative of job.protected) {
    const where = path.join(job.checkout, relative)
    const agent = job.agentPaths.includes(relative)
    const found = fs.lstatSync(where, { throwIfNoEntry: false })
    if (found?.isDirectory()) mounts.push(agent ? bind(job.empty, where, "ro") : bind(where, where, "ro"))
    else if (found?.isFile() && !agent) mounts.push(bind(where, where, "ro"))
    else if (found) mounts.push(bind("/dev/null", where, "ro"))
    else {
      const file = relative.includes(".") && !relative.startsWith(".")
      mounts.push(file ? bind("/dev/null", where, "ro") : bind(job.empty, where, "ro"))
      made.push(where)
    }
  }
  return { mounts, made }
}

function spec(hidden) {
  const { readWrite, readOnly, scratch } = job.mounts
  const env = Object.entries(process.env)
    .filter(([name]) => !job.hostOnlyEnv.includes(name))
    .map(([name, value]) => `${name}=${value}`)
  const port = job.modelPort
  const inside = [
    `cp -a ${job.pristineConfig}/. ${job.configHome}/`,
    `socat TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${job.modelSocketInside} &`,
    `until (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; do sleep 0.01; done`,
    'exec "$@"',
  ].join("\n")
  return {
    ociVersion: "1.0.0",
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: ["/bin/bash", "-c", inside, "gvisor-job", ...agentArgv],
      env,
      cwd: job.checkout,
      capabilities: { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] },
      noNewPrivileges: true,
    },
    root: { path: job.root, readonly: true },
    hostname: "job",
    mounts: [
      { destination: "/proc", type: "proc", source: "proc" },
      { destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "mode=755"] },
      { destination: "/dev/pts", type: "devpts", source: "devpts", options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"] },
      { destination: "/dev/shm", type: "tmpfs", source: "shm", options: ["nosuid", "noexec", "nodev", "mode=1777"] },
      { destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"] },
      tmpfs("/tmp", "1777"),
      tmpfs("/run"),
      ...readWrite.map(([from, to]) => bind(from, to, "rw")),
      ...readOnly.map(([from, to]) => bind(from, to, "ro")),
      ...scratch.map((to) => tmpfs(to)),
      ...hidden,
    ],
    // PID, IPC, UTS and mount namespaces of the Sentry's own; no network namespace: the job's, as boundary made it.
    linux: { namespaces: ["pid", "ipc", "uts", "mount"].map((type) => ({ type })) },
  }
}

function removeMade(made) {
  for (const where of made) {
    const found = fs.lstatSync(where, { throwIfNoEntry: false })
    if (found?.isDirectory()) {
      try {
        fs.rmdirSync(where) // only while empty: what a job put there is the job's, and stays
      } catch {}
    } else if (found?.isFile() && found.size === 0) fs.rmSync(where, { force: true })
  }
}

// The model, from the job's network namespace into the sandbox's, through a socket.
function bridgeModel() {
  fs.rmSync(job.modelSocket, { force: true })
  const bridge = spawn("socat", [`UNIX-LISTEN:${job.modelSocket},fork`, `TCP:127.0.0.1:${job.modelPort}`], { stdio: "ignore" })
  const deadline = Date.now() + 10_000
  while (!fs.existsSync(job.modelSocket)) {
    if (Date.now() > deadline || bridge.exitCode !== null) throw new Error(`socat made no socket at ${job.modelSocket}`)
    spawnSync("sleep", ["0.01"])
  }
  return bridge
}

const { mounts, made } = protectedMounts()
fs.writeFileSync(path.join(job.bundle, "config.json"), JSON.stringify(spec(mounts), null, 1))
spawnSync(RUNSC[0], [...RUNSC.slice(1), "delete", "--force", job.id], { stdio: "ignore" }) // a killed start's
const bridge = bridgeModel()
// runsc's gofer makes each bind's mount point in the root directory on the host, read-only root or not: a root
// shared by every job would collect every job's paths. Each start gets an overlay of its own (its upper layer
// under the job's directory), mounted in a mount namespace of runsc's own.
for (const dir of [job.upper, job.work, job.root]) {
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
}
const overlay = `lowerdir=${job.rootfs},upperdir=${job.upper},workdir=${job.work}`
const ownRoot = ["unshare", "--mount", "--propagation", "private", "bash", "-c", 'mount -t overlay job-root -o "$1" "$2" && shift 2 && exec "$@"', "job-root", overlay, job.root]
const sandbox = spawn(ownRoot[0], [...ownRoot.slice(1), ...RUNSC, ...SANDBOX, "run", "--bundle", job.bundle, job.id], { stdio: "inherit" })
const stop = () => spawnSync(RUNSC[0], [...RUNSC.slice(1), "kill", "--all", job.id, "KILL"], { stdio: "ignore" })
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
sandbox.on("exit", (code, signal) => {
  try {
    bridge.kill()
    removeMade(made)
  } finally {
    process.exit(code ?? 128 + (signal === "SIGKILL" ? 9 : 15))
  }
})
