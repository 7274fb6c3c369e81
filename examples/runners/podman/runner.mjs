#!/usr/bin/env node
// A runner of opencode jobs that puts each job's agent in a podman container of its own: the commonest
// production pattern (a throwaway container per job, the checkout mounted in). It is ../opencode/runner.mjs
// with the container as its OS layer: there, srt confines only the shell and the agent process runs on the
// host; here the agent *and* its shell run in the container, which sees nothing of the runner's state.
//
//   node runner.mjs describe | setup STATE REPOSITORY | create-job NAME MODEL_URL | remove-job NAME
//
// The job's image is built once by ./image.sh (debootstrap + `podman import`, Debian packages only);
// `setup` refuses to start without it and says how to build it. The pinned opencode is bound in read-only.
//
// What keeps one job out of another's data:
// - The container sees, at the same paths as the host: the job's checkout, data directory and TMPDIR
//   (read-write), its runner files, the opencode executable and the pre-installed plugin SDK (read-only), and
//   the agent's config directory as a copy made at each start. Nothing else of STATE: no other job, no
//   credential, no account directory. The checkout's .git is read-only, its agent files hidden.
// - Each job has a database of its own (OPENCODE_DB in its data directory): a shell in the same container
//   as the agent reads whatever the agent reads, so an account database shared by jobs could not be kept
//   from it. Restarting a job continues its own sessions; no job sees another's.
// - The container's root is read-only, every capability dropped, no new privileges; it has its own PID,
//   IPC, mount, UTS and network namespaces (loopback only), and reaches the model through a socket the
//   launcher bridges to MODEL_URL: no other job's listeners or abstract sockets are in reach.
// - Agent permissions and the guard plugin stay as in ../opencode: they refuse in their own words before
//   the container is asked, and `task` still may not continue a session the job did not start.
// - podman keeps its containers, run-time state and locks under STATE (its own storage.conf and
//   containers.conf), and finds the image in image.sh's store, read-only: nothing a job leaves in podman's
//   storage outlives the runner's state, and nothing goes to the host's /run.
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { planFor, thisHost, ulimitArgs } from "./host.mjs"
import {
  findOpencodeSdk,
  findTool,
  main,
  OpencodeRunner,
  OS_DENIALS,
  PROJECT_AGENT_PATHS,
  PROJECT_PROTECTED,
  RunnerError,
  shellQuote,
} from "../opencode/runner.mjs"

export const IMAGE_SCRIPT = fileURLToPath(new URL("./image.sh", import.meta.url))
// What the job's environment keeps out of the container: the launcher's own and the shell's bookkeeping.
export const HOST_ONLY_ENV = ["PWD", "OLDPWD", "SHLVL", "_", "CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF"]
const PODMAN_TIMEOUT_MS = 30_000
// Where the container finds the model's socket (the host side is under STATE/podman/jobs/NAME).
export const MODEL_SOCKET_DIR = "/run/boundary-model"
// Where the container finds the runner's pristine agent configuration, copied at each start into a tmpfs at the
// config directory's own path: opencode writes there as it starts, and what a job writes there dies with it.
export const PRISTINE_CONFIG_DIR = "/run/boundary-config"
// What shows the container refused: the kernel's words, and opencode's own for a file the container does not
// have (its read tool names a path that exists on the host but not in here "File not found: PATH").
export const CONTAINER_DENIALS = [...OS_DENIALS, "File not found: "]

// podman as root, with a /run of its own: its network code makes /run/containers/networks even for
// --network=none, and its other state is configured under STATE.
const PRIVATE_RUN = ["unshare", "--mount", "--propagation", "private", "bash", "-c", 'mount -t tmpfs podman-run /run && exec podman "$@"', "podman"]

// A container engine's command (podman, runsc), its output as text; a failure to start it is the runner's error.
export function run(argv) {
  const done = spawnSync(argv[0], argv.slice(1), { encoding: "utf8", timeout: PODMAN_TIMEOUT_MS })
  if (done.error) throw new RunnerError(`${argv.join(" ")}: ${done.error.message}`)
  return done
}

export const podman = {
  name: "podman",
  // What podman prints when the container cannot start. The container holds the whole agent, so a failed start
  // fails the job before any tool runs; no tool's answer should ever carry these.
  startupFailures: ["Error: OCI runtime error", "Error: crun:", "Error: runc:", "conmon failed"],

  version() {
    const done = run(["podman", "--version"])
    return done.stdout.trim().split(" ").pop()
  },

  // The tag image.sh builds from its own recipe; the image must exist (building takes a minute or two).
  image() {
    const checked = run(["bash", IMAGE_SCRIPT, "--check"])
    if (checked.status !== 0) {
      throw new RunnerError(`expected the job image in podman's store: ${checked.stderr.trim()} (or: just runner-image)`)
    }
    const [tag, store] = checked.stdout.trim().split(" ")
    return { tag, store }
  },

  // What this host needs of podman (its runtime), or the runner's error that says what to change.
  plan() {
    const plan = planFor(thisHost())
    if (plan.problem) throw new RunnerError(`podman cannot start a job's container on this host: ${plan.problem} — fix: ${plan.fix}`)
    return plan
  },

  tmpdirProblem: () => null,
}

export class PodmanRunner extends OpencodeRunner {
  name = "opencode-podman"

  constructor(env = process.env) {
    super(env)
    // BOUNDARY_SANDBOX=passthrough (boundary's control) runs the agent on the host as ../opencode does,
    // with a shell that confines nothing; any other name is refused by the parent.
    this.contained = !env.BOUNDARY_SANDBOX
    if (this.contained) this.sandbox = podman
  }

  describe() {
    const described = super.describe()
    if (!this.contained) return described
    const { denials } = described
    return { ...described, denials: { ...denials, "OS sandbox": CONTAINER_DENIALS } }
  }

  setup(state, repository) {
    const { credentials } = super.setup(state, repository)
    if (this.contained) this.prepareEngine(this.checkedState(state))
    return { credentials } // no account database: each job keeps its own
  }

  // -- podman's own configuration, under STATE -----------------------------------------------------------

  podmanDir(state) {
    return path.join(state, "podman")
  }

  // The container engine's own configuration, under STATE (a subclass with another engine writes its own).
  prepareEngine(state) {
    const dir = this.podmanDir(state)
    fs.mkdirSync(this.emptyDir(state), { recursive: true })
    const image = podman.image()
    const { runtime } = podman.plan() // crun cannot start on some hosts: see host.mjs
    fs.writeFileSync(path.join(dir, "image"), `${image.tag}\n`)
    fs.writeFileSync(
      path.join(dir, "storage.conf"),
      `[storage]\ndriver = "overlay"\ngraphroot = ${JSON.stringify(path.join(dir, "root"))}\n` +
        `runroot = ${JSON.stringify(path.join(dir, "run"))}\n` +
        `[storage.options]\nadditionalimagestores = [${JSON.stringify(image.store)}]\n`,
    )
    // Nothing in the host's /run, /etc or journal: podman's run-time state, locks and network files stay under
    // STATE too (its network lock would otherwise go to /etc/cni/net.d or /etc/containers/networks).
    fs.mkdirSync(path.join(dir, "tmp"), { recursive: true })
    fs.writeFileSync(
      path.join(dir, "containers.conf"),
      `[engine]\n${runtime ? `runtime = ${JSON.stringify(runtime)}\n` : ""}events_logger = "none"\ntmp_dir = ${JSON.stringify(path.join(dir, "tmp"))}\nlock_type = "file"\n` +
        `[network]\nnetwork_config_dir = ${JSON.stringify(path.join(dir, "networks"))}\n`,
    )
  }

  // An empty directory, bound read-only where a job must not make one (a project's agent directories).
  emptyDir(state) {
    return path.join(this.podmanDir(state), "empty")
  }

  podmanEnv(state) {
    const dir = this.podmanDir(state)
    return { CONTAINERS_CONF: path.join(dir, "containers.conf"), CONTAINERS_STORAGE_CONF: path.join(dir, "storage.conf") }
  }

  containerName(paths) {
    return `boundary-job-${paths.name}`
  }

  // -- the job -------------------------------------------------------------------------------------------------

  jobEnv(paths, shell) {
    const env = super.jobEnv(paths, shell)
    return this.contained ? { ...env, OPENCODE_DB: path.join(paths.data, "opencode.db") } : env
  }

  // In the container, the shell is the image's bash: the container is what confines it.
  writeShellWrapper(paths) {
    return this.contained ? "/bin/bash" : super.writeShellWrapper(paths)
  }

  // The executable at the path the job's argv names, so the same path works inside and out.
  agentArgv() {
    return this.contained ? [this.opencode(), ...super.agentArgv().slice(1)] : super.agentArgv()
  }

  opencode() {
    return findTool("opencode", this.env)
  }

  writeLauncher(paths, agentArgv) {
    if (!this.contained) return super.writeLauncher(paths, agentArgv)
    const launcher = path.join(paths.runnerFiles, "launch")
    fs.writeFileSync(launcher, this.launcherScript(paths))
    fs.chmodSync(launcher, 0o755)
    return [launcher, ...agentArgv]
  }

  // What the container sees, as [host path, path inside]: the job's own places read-write; its runner files, the
  // agent and the plugin SDK read-only; the model's socket, read-only, at MODEL_SOCKET_DIR; the agent's config
  // directory as a scratch copy (see PRISTINE_CONFIG_DIR). Each of the job's places where `seenInside` puts it (at
  // its host path here); the agent and SDK at their host paths; the runner's own two under /run.
  mounts(paths) {
    const opencode = this.opencode()
    const sdk = findOpencodeSdk(this.env)
    const seen = (dir) => [dir, this.seen(paths, dir)]
    return {
      readWrite: [paths.checkout, paths.data, paths.tmp].map(seen),
      readOnly: [
        seen(paths.runnerFiles),
        [fs.realpathSync(opencode), opencode],
        [sdk, sdk],
        [this.socketDir(paths), MODEL_SOCKET_DIR],
        [this.agentDirs(paths).configHome, PRISTINE_CONFIG_DIR],
      ],
      scratch: [this.seen(paths, this.agentDirs(paths).configHome)],
    }
  }

  // The job's directories the container sees somewhere else than the host has them, as [host, inside]: none here
  // (a subclass binds them where production containers put them, and answers boundary's `paths_inside`).
  seenInside(paths) {
    return []
  }

  // `seenInside`, the longest host path first: a bind inside another wins.
  innermostFirst(paths) {
    return this.seenInside(paths).sort(([a], [b]) => b.length - a.length)
  }

  // Where the container sees a host path: under the innermost of `seenInside` that holds it, else where it is.
  seen(paths, hostPath) {
    const bind = this.innermostFirst(paths).find(([host]) => hostPath === host || hostPath.startsWith(`${host}/`))
    return bind ? bind[1] + hostPath.slice(bind[0].length) : hostPath
  }

  prepareJob(paths, modelUrl) {
    this.prepareBridge(paths, modelUrl)
    const answer = super.prepareJob(paths, modelUrl)
    const binds = this.seenInside(paths)
    return binds.length ? { ...answer, paths_inside: Object.fromEntries(binds) } : answer
  }

  // The host side of the model's bridge: a directory of the runner's per job, bound read-only in the container.
  socketDir(paths) {
    return path.join(this.podmanDir(paths.state), "jobs", paths.name)
  }

  prepareBridge(paths, modelUrl) {
    fs.mkdirSync(this.socketDir(paths), { recursive: true })
    this.modelPort = modelPort(modelUrl)
  }

  // What keeps the container apart from the host and from the account's other jobs: podman's own namespaces
  // (PID, IPC, UTS, mount) and a network of its own with loopback only; a read-only root; no capabilities.
  isolation() {
    return ["--network=none", "--read-only", "--cap-drop=all", "--security-opt=no-new-privileges"]
  }

  launcherScript(paths) {
    const { readWrite, readOnly, scratch } = this.mounts(paths)
    const podmanEnv = Object.entries(this.podmanEnv(paths.state)).map(([key, value]) => `${key}=${shellQuote(value)}`)
    const binds = [
      ...readWrite.map(([from, to]) => `-v ${shellQuote(`${from}:${to}:rw`)}`),
      ...readOnly.map(([from, to]) => `-v ${shellQuote(`${from}:${to}:ro`)}`),
      ...scratch.map((dir) => `--mount ${shellQuote(`type=tmpfs,destination=${dir},tmpfs-mode=0755`)}`),
    ]
    const config = shellQuote(this.seen(paths, this.agentDirs(paths).configHome))
    const socket = path.join(this.socketDir(paths), "model.sock")
    const port = this.modelPort
    const inside = `cp -a ${PRISTINE_CONFIG_DIR}/. ${config}/\nsocat TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${MODEL_SOCKET_DIR}/model.sock &\nuntil (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; do sleep 0.01; done\nexec "$@"`
    return `#!/bin/bash
# runner launcher: start the agent in a container of its own, with no network but a bridge to the model.
# What the checkout carries for agents, and its .git, are read-only and hidden at each start: a repository is
# untrusted input, and so is what a job left in it.
set -euo pipefail
export ${podmanEnv.join(" ")}
image=$(cat ${shellQuote(path.join(this.podmanDir(paths.state), "image"))})
empty=${shellQuote(this.emptyDir(paths.state))}
# The model, from this (the runner's) network namespace into the container's, through a socket: the container's
# own namespace has only loopback, so no other job's listeners or abstract sockets are in reach.
rm -f ${shellQuote(socket)}
socat UNIX-LISTEN:${shellQuote(socket)},fork TCP:127.0.0.1:${port} </dev/null >/dev/null 2>&1 &
bridge=$!
until [ -S ${shellQuote(socket)} ]; do sleep 0.01; done
args=(run --rm --pull=never --name ${shellQuote(this.containerName(paths))} ${this.isolation().join(" ")}
  --workdir ${shellQuote(this.seen(paths, paths.checkout))}
  ${binds.join("\n  ")})
# The container's rlimits are the launcher's own: podman as root asks for more, which fails without CAP_SYS_RESOURCE.
${ulimitArgs()}
made=()
for relative in ${PROJECT_PROTECTED.map(shellQuote).join(" ")}; do
  path=${shellQuote(paths.checkout)}/"$relative" seen=${shellQuote(this.seen(paths, paths.checkout))}/"$relative"
  case " ${PROJECT_AGENT_PATHS.join(" ")} " in *" $relative "*) agent=1 ;; *) agent= ;; esac
  if [ -d "$path" ] && [ ! -L "$path" ]; then
    if [ -n "$agent" ]; then args+=(-v "$empty:$seen:ro"); else args+=(-v "$path:$seen:ro"); fi
  elif [ -f "$path" ] && [ ! -L "$path" ] && [ -z "$agent" ]; then args+=(-v "$path:$seen:ro")
  elif [ -e "$path" ] || [ -L "$path" ]; then args+=(-v "/dev/null:$seen:ro")
  # Absent: kept from being made. podman makes an empty mount point in the checkout, removed when the job ends.
  elif [[ "$relative" == *.* && "$relative" != .* ]]; then args+=(-v "/dev/null:$seen:ro"); made+=("$path")
  else args+=(-v "$empty:$seen:ro"); made+=("$path"); fi
done
ended() { kill "$bridge" 2>/dev/null || true; for path in "\${made[@]}"; do
  if [ -d "$path" ] && [ ! -L "$path" ]; then rmdir -- "$path" 2>/dev/null || true
  elif [ -f "$path" ] && [ ! -s "$path" ] && [ ! -L "$path" ]; then rm -f -- "$path"; fi
done; }
# The job's environment, as the runner wrote it, goes in${this.seenInside(paths).length ? ", each path where the container sees it" : " by name"}.
for name in $(compgen -e); do
  case " ${HOST_ONLY_ENV.join(" ")} " in *" $name "*) ;; *) ${this.envInside(paths)} ;; esac
done
trap ended EXIT
trap 'exit 143' TERM INT
# podman's network code makes /run/containers/networks even for --network=none: it gets a /run of its own.
${PRIVATE_RUN.map(shellQuote).join(" ")} "\${args[@]}" "$image" bash -c ${shellQuote(inside)} model-bridge "$@"
`
  }

  // The bash that passes variable $name into the container: by name, or with its value's paths as seen inside.
  envInside(paths) {
    const binds = this.innermostFirst(paths)
    if (!binds.length) return 'args+=(--env "$name")'
    const quoted = (text) => `'${text.replaceAll("'", "'\\''")}'` // always: a bare / would end the pattern
    const rewrites = binds.map(([host, inside]) => `value=\${value//${quoted(host)}/${quoted(inside)}}`)
    return `value=\${!name}; ${rewrites.join("; ")}; args+=(--env "$name=$value")`
  }

  removeJobPaths(paths) {
    if (this.contained) this.removeContainer(paths)
    super.removeJobPaths(paths)
  }

  // A job killed mid-run leaves its container behind (--rm never ran): remove it by name.
  removeContainer(paths) {
    if (!fs.existsSync(this.podmanDir(paths.state))) return
    spawnSync(PRIVATE_RUN[0], [...PRIVATE_RUN.slice(1), "rm", "--force", "--ignore", this.containerName(paths)], {
      env: { ...this.env, ...this.podmanEnv(paths.state) },
      stdio: "ignore",
      timeout: PODMAN_TIMEOUT_MS,
    })
  }
}

// The port of MODEL_URL (boundary's is on 127.0.0.1 of the job's network namespace).
function modelPort(modelUrl) {
  const url = new URL(modelUrl)
  if (url.hostname !== "127.0.0.1" && url.hostname !== "localhost") {
    throw new RunnerError(`MODEL_URL ${modelUrl}: expected a model on 127.0.0.1, which the launcher bridges into the container`)
  }
  return Number(url.port || (url.protocol === "https:" ? 443 : 80))
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new PodmanRunner(env))
