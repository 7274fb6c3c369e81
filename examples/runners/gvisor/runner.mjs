#!/usr/bin/env node
// A runner of opencode jobs that puts each job's agent in a gVisor sandbox of its own (runsc, the ptrace
// platform): a user-space kernel between the job and the host's, as several hosted agent platforms run theirs.
// It is ../podman/runner.mjs with runsc in podman's place: the same binds at the same paths, the same per-job
// database, the same hidden project files; what differs is the engine.
//
//   node runner.mjs describe | setup STATE REPOSITORY | create-job NAME MODEL_URL | remove-job NAME
//
// The root file system is ../podman/image.sh's (debootstrap, Debian packages only), used read-only;
// `setup` refuses to start without it and says how to build it. The pinned opencode is bound in read-only.
//
// What keeps one job out of another's data, beyond what the podman example does:
// - Every system call of the job lands in its own Sentry (gVisor's kernel), never in the host's. Its /proc
//   lists only its own tasks; its unix sockets, abstract ones too, are its own; it may not connect to the
//   host's unix sockets (runsc's default --host-uds=none).
// - Files come through runsc's gofer, which opens only what the spec binds: the checkout, data and TMPDIR
//   read-write, the runner files, opencode and its plugin SDK read-only, a scratch copy of the config.
// - Networking: --network=none, gVisor's own network stack with loopback only, and the model bridged in through a
//   socket as in the podman example (--host-uds=open lets the sandbox connect to the one socket bound in). Not
//   --network=host: the job's sandbox would share the namespace's loopback, and with it every service listening
//   there (boundary's reach scenario found its runner API and metadata canaries that way, LEAKED).
// - runsc keeps its state under STATE (--root), and configures no cgroups (--ignore-cgroups).
//
// What boundary must know: gVisor's ptrace platform traces its own processes, so the job cannot run under
// boundary's `strace -f`. `describe` says `network_watch: packets`: boundary watches the job's namespace by
// packets instead (docs/runner-protocol.md).
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { main, PROJECT_AGENT_PATHS, PROJECT_PROTECTED, RunnerError } from "../opencode/runner.mjs"
import {
  CONTAINER_DENIALS,
  HOST_ONLY_ENV,
  IMAGE_SCRIPT,
  MODEL_SOCKET_DIR,
  PodmanRunner,
  PRISTINE_CONFIG_DIR,
  run,
} from "../podman/runner.mjs"

const LAUNCH = fileURLToPath(new URL("./launch.mjs", import.meta.url))
const RUNSC_TIMEOUT_MS = 30_000
const STAT_APPLETS = ["ls", "stat"]

export const gvisor = {
  name: "gvisor",
  // What runsc prints when the sandbox cannot start: the job fails before any tool runs.
  startupFailures: ["cannot create sandbox", "creating container:", "running container:"],

  version() {
    const done = run(["runsc", "--version"])
    return done.stdout.split("\n")[0].replace(/^runsc version /, "").trim()
  },

  // The root file system image.sh builds (debootstrap); it must exist (building takes a minute or two).
  rootfs() {
    const checked = run(["bash", IMAGE_SCRIPT, "--rootfs"])
    if (checked.status !== 0) {
      throw new RunnerError(`expected the job root file system: ${checked.stderr.trim()} (or: just runner-image)`)
    }
    return checked.stdout.trim()
  },

  tmpdirProblem: () => null,
}

export class GvisorRunner extends PodmanRunner {
  name = "opencode-gvisor"

  constructor(env = process.env) {
    super(env)
    if (this.contained) this.sandbox = gvisor
  }

  describe() {
    const described = super.describe()
    if (!this.contained) return described
    return { ...described, denials: { ...described.denials, "OS sandbox": CONTAINER_DENIALS }, network_watch: "packets" }
  }

  // -- runsc's own state, under STATE --------------------------------------------------------------------------

  engineDir(state) {
    return path.join(state, "gvisor")
  }

  prepareEngine(state) {
    const dir = this.engineDir(state)
    fs.mkdirSync(path.join(dir, "run"), { recursive: true })
    fs.mkdirSync(this.emptyDir(state), { recursive: true })
    fs.writeFileSync(path.join(dir, "rootfs"), `${gvisor.rootfs()}\n`)
    // gVisor 20221219 refuses statx's AT_NO_AUTOMOUNT, which coreutils' ls and stat pass ("Invalid argument"):
    // busybox's, which stat the classic way, come first on PATH (bound at /usr/local/bin).
    fs.mkdirSync(this.binDir(state), { recursive: true })
    for (const applet of STAT_APPLETS) {
      const link = path.join(this.binDir(state), applet)
      fs.rmSync(link, { force: true })
      fs.symlinkSync("/bin/busybox", link)
    }
  }

  binDir(state) {
    return path.join(this.engineDir(state), "bin")
  }

  emptyDir(state) {
    return path.join(this.engineDir(state), "empty")
  }

  // runsc finds a container by any unique prefix of its ID: with IDs made of job names, starting (or deleting)
  // job "job-b" reached the running sandbox of job "job-b.data-a" and killed it. IDs of one length cannot be
  // prefixes of each other.
  containerName(paths) {
    return `boundary-${createHash("sha256").update(paths.name).digest("hex").slice(0, 24)}`
  }

  jobDir(paths) {
    return path.join(this.engineDir(paths.state), "jobs", paths.name)
  }

  // -- the job -------------------------------------------------------------------------------------------------

  // The model's bridge as podman's (a socket of the job's, bound in), and the sandbox's OCI bundle directory.
  prepareBridge(paths, modelUrl) {
    super.prepareBridge(paths, modelUrl)
    fs.mkdirSync(path.join(this.jobDir(paths), "bundle"), { recursive: true })
  }

  socketDir(paths) {
    return path.join(this.jobDir(paths), "model")
  }

  mounts(paths) {
    const { readWrite, readOnly, scratch } = super.mounts(paths)
    return { readWrite, readOnly: [...readOnly, [this.binDir(paths.state), "/usr/local/bin"]], scratch }
  }

  writeLauncher(paths, agentArgv) {
    if (!this.contained) return super.writeLauncher(paths, agentArgv)
    const state = paths.state
    const job = {
      id: this.containerName(paths),
      runscRoot: path.join(this.engineDir(state), "run"),
      bundle: path.join(this.jobDir(paths), "bundle"),
      rootfs: fs.readFileSync(path.join(this.engineDir(state), "rootfs"), "utf8").trim(),
      // The job's own root: an overlay on the shared root file system, made at each start.
      root: path.join(this.jobDir(paths), "root"),
      upper: path.join(this.jobDir(paths), "upper"),
      work: path.join(this.jobDir(paths), "work"),
      checkout: paths.checkout,
      empty: this.emptyDir(state),
      mounts: this.mounts(paths),
      configHome: this.agentDirs(paths).configHome,
      pristineConfig: PRISTINE_CONFIG_DIR,
      network: this.sandboxNetwork(),
      modelPort: this.modelPort,
      modelSocket: path.join(this.socketDir(paths), "model.sock"),
      modelSocketInside: `${MODEL_SOCKET_DIR}/model.sock`,
      protected: PROJECT_PROTECTED,
      agentPaths: PROJECT_AGENT_PATHS,
      hostOnlyEnv: HOST_ONLY_ENV,
    }
    const spec = path.join(paths.runnerFiles, "gvisor-job.json")
    fs.writeFileSync(spec, JSON.stringify(job, null, 2))
    return [process.execPath, LAUNCH, spec, ...agentArgv]
  }

  // gVisor's own network stack, loopback only: the model comes in through the bridge, and nothing else does.
  sandboxNetwork() {
    return "none"
  }

  removeContainer(paths) {
    const runscRoot = path.join(this.engineDir(paths.state), "run")
    if (!fs.existsSync(runscRoot)) return
    // A job killed mid-run leaves its sandbox behind: remove it by name (nothing to do when it ended).
    spawnSync("runsc", ["--root", runscRoot, "delete", "--force", this.containerName(paths)], {
      stdio: "ignore",
      timeout: RUNSC_TIMEOUT_MS,
    })
    fs.rmSync(this.jobDir(paths), { recursive: true, force: true })
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new GvisorRunner(env))
