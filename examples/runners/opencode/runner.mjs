#!/usr/bin/env node
// A runner of opencode jobs, as a runner author would write their own: it speaks boundary's runner
// protocol (docs/runner-protocol.md), so boundary can attack the very launch code it runs in production.
//
//   node runner.mjs describe                       what this runner is: agent, sandbox, refusal texts, tools
//   node runner.mjs setup STATE REPOSITORY         create the runner's state for jobs of REPOSITORY
//   node runner.mjs create-job NAME MODEL_URL      check out and configure one job; print how it is launched
//   node runner.mjs remove-job NAME                remove what create-job made
//
// Each call prints one JSON object on stdout; diagnostics go to stderr. Node 24, standard library only.
//
// What keeps one job out of another's data (each part answers an incident in boundary's DESIGN.md):
// - Each job gets its own checkout and its own data directory `<checkout>.data` (opencode's saved output
//   lives under XDG_DATA_HOME); only sessions and the credential are shared, in the account database
//   named by an absolute OPENCODE_DB.
// - Agent permissions deny every directory outside the checkout but the job's own data directory.
// - The runner's guard plugin (guard.js) holds the file tools, which run unconfined in the agent
//   process, to the job's roots, symlinks resolved; it also removes opencode's own server tools.
// - The job's shell runs under srt (`SHELL` is a wrapper) and sees nothing of the runner's state but its
//   own checkout and TMPDIR; nor may it write where srt lets every sandbox write (/tmp/claude & co).
// - A launcher starts opencode under bwrap with the runner's files bound read-only and the agent
//   configuration the repository carries hidden: a repository is untrusted input.
//
// Layout under STATE:
//   runner.json                      the repository jobs are cloned from (written by setup)
//   accounts/account/opencode.db     the account's sessions, shared by its jobs
//   accounts/account/credentials     the account's credential (boundary's runner secret), for the runner only
//   checkouts/<job>/                 the job's checkout (its working directory)
//   checkouts/<job>.data/            its data directory (XDG_DATA_HOME), removed with it
//   runner/<job>/                    what configures the job: no channel of the job may change it
//   tmp/<job>/                       its TMPDIR (kept short: srt binds Unix sockets in it)
import { spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

export const PROTOCOL = 1

// --- What opencode 1.18.33 is, as this runner configures it -------------------------------------------

// The tools the model must be offered with this config, exactly; and patterns that must never be offered:
// opencode's own server tools run unconfined, on the database every job of the account shares.
export const EXPECTED_TOOLS = ["bash", "edit", "glob", "grep", "read", "skill", "task", "todowrite", "write"]
// webfetch runs in the agent process too, outside every sandbox: it fetched the runner's API on loopback and the
// cloud metadata service for a job (boundary's reach scenario), so it goes as well.
export const FORBIDDEN_TOOLS = ["opencode_*", "webfetch"]

// The texts that show which layer refused a tool call.
export const PERMISSION_DENIAL = "The user has specified a rule which prevents you from using this specific tool call"
export const GUARD_DENIAL = "runner guard:" // guard.js starts every refusal with it
export const OS_DENIALS = [
  "No such file or directory",
  "Permission denied",
  "Operation not permitted",
  "Read-only file system",
  "Not a directory", // srt binds /dev/null over a denied path that does not exist yet…
  "File exists", // …so creating a directory there fails this way
]

// Agent configuration a checkout may carry: hidden from the agent at each start. opencode's plugin loader
// imports `.opencode/plugin(s)/*` and opencode.json's plugins even with OPENCODE_DISABLE_PROJECT_CONFIG set.
export const PROJECT_AGENT_PATHS = [".opencode", "opencode.json", "opencode.jsonc", ".claude", ".agents", "AGENTS.md", "CLAUDE.md"]
// What no channel of the job may write in its checkout: the above, and what git or the TUI would load.
export const PROJECT_PROTECTED = [...PROJECT_AGENT_PATHS, "CONTEXT.md", "tui.json", "tui.jsonc", ".git"]

// Everything that would make opencode reach the network at start (jobs run with loopback only: it would hang).
export const QUIET_ENV = {
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
}
// Project configuration off: permission overrides, agents, commands, tools, skills from .claude/.agents.
export const NO_PROJECT_CONFIG = {
  OPENCODE_DISABLE_PROJECT_CONFIG: "1",
  OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
}
// What the job keeps of the environment the runner was called with.
const KEPT_ENV = ["PATH", "LANG", "TERM"]

export const GUARD_SOURCE = fileURLToPath(new URL("./guard.js", import.meta.url))
const JOB_NAME = /^[A-Za-z0-9_.-]+$/

// --- Errors ----------------------------------------------------------------------------------------------

// A failure the runner explains: printed as one line, exit status 1.
export class RunnerError extends Error {}

// A call the runner does not understand: exit status 2.
export class UsageError extends RunnerError {}

// --- Finding the pinned tools ------------------------------------------------------------------------------

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

function onPath(name, env) {
  for (const directory of (env.PATH ?? "").split(path.delimiter)) {
    if (directory && isExecutable(path.join(directory, name))) return path.join(directory, name)
  }
  return null
}

// `name` from boundary's pinned tools (BOUNDARY_TOOLS_BIN), else from PATH; absolute, since the job's own
// PATH must not decide which agent or sandbox runs.
export function findTool(name, env) {
  const pinned = env.BOUNDARY_TOOLS_BIN ? path.join(env.BOUNDARY_TOOLS_BIN, name) : null
  if (pinned && isExecutable(pinned)) return pinned
  const found = onPath(name, env)
  if (found) return path.resolve(found)
  const where = pinned ? `${pinned} is not an executable and` : "BOUNDARY_TOOLS_BIN is not set and"
  throw new RunnerError(`cannot find ${name}: ${where} there is no ${name} on PATH`)
}

// The Node.js that runs srt: boundary's pinned one (srt declares engines.node >= 22.12), else PATH's.
export function findNode(env) {
  if (env.BOUNDARY_NODE) {
    if (isExecutable(env.BOUNDARY_NODE)) return env.BOUNDARY_NODE
    throw new RunnerError(`BOUNDARY_NODE=${env.BOUNDARY_NODE} is not an executable`)
  }
  const found = onPath("node", env)
  if (found) return path.resolve(found)
  throw new RunnerError("cannot find node: BOUNDARY_NODE is not set and there is no node on PATH")
}

// The directory whose node_modules holds the pinned @opencode-ai/plugin. Without it in the config directory,
// opencode installs the package from npm at every start, and a job without network hangs there.
export function findOpencodeSdk(env) {
  const sdk = env.BOUNDARY_OPENCODE_SDK
  if (!sdk) throw new RunnerError("BOUNDARY_OPENCODE_SDK is not set: without @opencode-ai/plugin pre-installed, opencode installs it at start (and hangs offline)")
  if (!fs.existsSync(path.join(sdk, "node_modules", "@opencode-ai", "plugin"))) {
    throw new RunnerError(`BOUNDARY_OPENCODE_SDK=${sdk} has no node_modules/@opencode-ai/plugin`)
  }
  return sdk
}

// The version in the package.json of the npm package an executable belongs to.
function packageVersion(executable) {
  for (let dir = path.dirname(fs.realpathSync(executable)); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json")
    if (fs.existsSync(manifest)) {
      const found = JSON.parse(fs.readFileSync(manifest, "utf8"))
      if (found.name && found.version) return found.version
    }
    if (dir === path.dirname(dir)) return "unknown"
  }
}

// --- Small helpers -------------------------------------------------------------------------------------------

// A word for bash, quoted only when it needs to be (as Python's shlex.quote).
export function shellQuote(word) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'"'"'`)}'`
}

function writeExecutable(file, text) {
  fs.writeFileSync(file, text)
  fs.chmodSync(file, 0o755)
}

// Regular files under `root`, not following symlinks (node_modules in the config directory is one).
export function filesUnder(root) {
  const found = []
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    const full = path.join(root, entry.name)
    if (entry.isDirectory()) found.push(...filesUnder(full))
    else if (entry.isFile()) found.push(full)
  }
  return found.sort()
}

// The runner's own git runs no code a repository or a job could have put in place: no hooks, no fsmonitor.
const GIT_IDENTITY = ["-c", "user.name=runner", "-c", "user.email=runner@localhost"]
const SAFE_GIT = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.file.allow=always"]
const GIT_TIMEOUT_MS = 60_000 // local operations only: a git that takes longer is stuck

function git(...args) {
  // Captured, never inherited: this runner's stdout carries its one JSON answer.
  const done = spawnSync("git", [...GIT_IDENTITY, ...SAFE_GIT, ...args], { encoding: "utf8", timeout: GIT_TIMEOUT_MS })
  if (done.error) throw new RunnerError(`git ${args.join(" ")}: ${done.error.message}`)
  if (done.status !== 0) throw new RunnerError(`git ${args.join(" ")} failed (exit ${done.status}): ${done.stderr.trim()}`)
  return done.stdout
}

// --- Shell sandboxes: what the `$SHELL` wrapper runs a command under ------------------------------------

// opencode runs `$SHELL -c CMD` for its bash tool; the wrapper hands CMD to the sandbox and refuses anything else.
// `lines` run before the sandbox starts; the last one execs it.
function shellWrapper(...lines) {
  return `#!/bin/sh
# runner shell wrapper: opencode runs \`$SHELL -c CMD\`; CMD runs confined.
if [ "$1" = "-c" ] && [ $# -eq 2 ]; then
  export SHELL=/bin/bash
  ${lines.join("\n  ")}
fi
if [ "$1" = "-l" ] && [ "$2" = "-c" ] && [ $# -eq 3 ]; then exec "$0" -c "$3"; fi
echo "runner shell wrapper: expected '-c CMD', got: $*" >&2
exit 126
`
}

const UNIX_PATH_MAX = 107 // sizeof(sun_path) - 1

// What srt 0.0.83 lets every sandbox write whatever the policy says, once the directory exists (its
// sandbox-utils.js: SANDBOX_OWN_WRITE_PATHS and HOME_CONVENIENCE_WRITE_DIRS): one job would leave there what
// the next reads. Denied here; a denied path that does not exist stays absent.
const SRT_SHARED_WRITES = ["/tmp/claude", "~/.npm/_logs", "~/.claude/debug"]

// srt: bubblewrap around each shell command, with the filesystem policy in a settings file.
export const srt = {
  name: "srt",
  // Texts that show srt never ran the command at all (such a result proves nothing).
  startupFailures: ["bwrap: ", "Sandbox dependencies", "srt: ", "Failed to create bridge sockets"],

  // The bare version: boundary's report files it under the sandbox's name ("srt": "0.0.83").
  version(env) {
    return packageVersion(findTool("srt", env))
  },

  settings(policy) {
    return {
      network: { allowedDomains: [], deniedDomains: [] },
      filesystem: {
        denyRead: policy.denyRead,
        allowRead: policy.allowRead,
        allowWrite: policy.allowWrite,
        denyWrite: [...policy.denyWrite, ...SRT_SHARED_WRITES],
      },
    }
  },

  // The wrapper's text; the settings go in the job's runner directory, beside it. srt gives the sandboxed
  // shell TMPDIR=/tmp/claude, one directory for every job, unless CLAUDE_CODE_TMPDIR names another: the
  // job's own TMPDIR, which its policy lets it write.
  wrapper(policy, paths, env) {
    const settings = path.join(paths.runnerFiles, "srt-settings.json")
    fs.writeFileSync(settings, JSON.stringify(this.settings(policy), null, 2))
    const command = [findNode(env), findTool("srt", env), "--settings", settings].map(shellQuote).join(" ")
    return shellWrapper(`export CLAUDE_CODE_TMPDIR=${shellQuote(paths.tmp)}`, `exec ${command} -c "$2"`)
  },

  // srt bridges its proxies through Unix sockets named $TMPDIR/claude-socks-<16 hex>.sock; over the kernel's
  // 107 bytes no socket can be bound, and every shell call would fail ("Failed to create bridge sockets").
  tmpdirProblem(tmp) {
    const length = Buffer.byteLength(tmp) + "/claude-socks-0123456789abcdef.sock".length
    if (length <= UNIX_PATH_MAX) return null
    return `srt's bridge socket under TMPDIR=${tmp} would be ${length} bytes, over the ${UNIX_PATH_MAX} a Unix socket path may have: every sandboxed shell call would fail. Give the runner a shorter STATE`
  },
}

// passthrough confines nothing: the control boundary asks for (BOUNDARY_SANDBOX=passthrough) to show that
// a runner without a sandbox is caught.
export const passthrough = {
  name: "passthrough",
  startupFailures: [],
  version: () => "none",
  wrapper: () => shellWrapper('exec /bin/bash -c "$2"'),
  tmpdirProblem: () => null,
}

export const SANDBOXES = { srt, passthrough }

export function chooseSandbox(requested) {
  const name = requested || "srt"
  if (!Object.hasOwn(SANDBOXES, name)) {
    throw new RunnerError(`BOUNDARY_SANDBOX=${name}: this runner cannot use that sandbox; it knows: ${Object.keys(SANDBOXES).join(", ")}`)
  }
  return SANDBOXES[name]
}

// --- The launcher ------------------------------------------------------------------------------------------

// Starts opencode in a mount namespace where the runner's files for the job are read-only and the agent
// configuration the checkout carries is hidden, at each start: the agent process is unconfined (only its
// shell runs under srt), so nothing else keeps it from rewriting its own rules or loading a repository's plugin.
function launcherScript(readonly, checkout, hidden) {
  return `#!/bin/bash
# runner launcher: start the agent; what the checkout carries for agents is hidden at each start.
set -euo pipefail
# An IPC namespace of its own: System V objects and POSIX queues are not files, so no path rule hides them.
args=(--dev-bind / / --die-with-parent --unshare-ipc)
for file in ${readonly.map(shellQuote).join(" ")}; do args+=(--ro-bind "$file" "$file"); done
for relative in ${hidden.map(shellQuote).join(" ")}; do
  path=${shellQuote(checkout)}/"$relative"
  if [ -d "$path" ] && [ ! -L "$path" ]; then args+=(--tmpfs "$path")
  elif [ -e "$path" ] || [ -L "$path" ]; then args+=(--ro-bind /dev/null "$path"); fi
done
exec bwrap "\${args[@]}" -- "$@"
`
}

// --- The runner ----------------------------------------------------------------------------------------------

// One method per concern, so a variant (../opencode-shared-data/runner.mjs) subclasses and changes one.
export class OpencodeRunner {
  name = "opencode-example"
  agent = "opencode"

  constructor(env = process.env) {
    this.env = env
    this.sandbox = chooseSandbox(env.BOUNDARY_SANDBOX)
  }

  // -- the verbs -------------------------------------------------------------------------------------------

  describe() {
    return {
      protocol: PROTOCOL,
      name: this.name,
      agent: this.agent,
      sandbox: this.sandbox.name,
      sandbox_version: this.sandbox.version(this.env),
      startup_failures: this.sandbox.startupFailures,
      denials: {
        "agent permission": [PERMISSION_DENIAL],
        "runner plugin": [GUARD_DENIAL],
        "OS sandbox": OS_DENIALS,
      },
      expected_tools: EXPECTED_TOOLS,
      forbidden_tools: FORBIDDEN_TOOLS,
      // How `boundary run --layers each` turns each layer off, to see which holds each cell alone.
      layer_off: {
        "agent permission": { RUNNER_PERMISSIONS: "off" },
        "runner plugin": { RUNNER_GUARD: "off" },
        "OS sandbox": { BOUNDARY_SANDBOX: "passthrough" },
      },
    }
  }

  setup(state, repository) {
    state = this.checkedState(state)
    repository = path.resolve(repository)
    if (!fs.existsSync(repository)) throw new RunnerError(`repository ${repository} does not exist`)
    for (const directory of [this.accountDir(state), path.join(state, "checkouts")]) {
      fs.mkdirSync(directory, { recursive: true })
    }
    // Later calls are new processes: what they need to know is kept in the state itself.
    fs.writeFileSync(this.setupRecord(state), JSON.stringify({ repository }, null, 2))
    return { account_db: this.accountDb(state), credentials: this.keepSecret(state) }
  }

  createJob(name, modelUrl) {
    const paths = this.jobPaths(this.stateFromEnv(), this.checkedName(name))
    checkedModelUrl(modelUrl)
    const problem = this.sandbox.tmpdirProblem(paths.tmp)
    if (problem) throw new RunnerError(`job ${name}: ${problem}`)
    this.refuseExisting(paths)
    try {
      return this.prepareJob(paths, modelUrl)
    } catch (error) {
      this.removeJobPaths(paths) // leave no half-made job behind
      throw error
    }
  }

  removeJob(name) {
    this.removeJobPaths(this.jobPaths(this.stateFromEnv(), this.checkedName(name)))
    return {}
  }

  // -- the layout --------------------------------------------------------------------------------------------

  jobPaths(state, name) {
    const checkout = path.join(state, "checkouts", name)
    return {
      name,
      state,
      checkout,
      data: `${checkout}.data`,
      runnerFiles: path.join(state, "runner", name),
      tmp: path.join(state, "tmp", name),
    }
  }

  // The directories the agent is pointed at: its config and home among the runner's files (read-only to the
  // job), its cache and state in its data directory.
  agentDirs(paths) {
    return {
      configHome: path.join(paths.runnerFiles, "config"),
      home: path.join(paths.runnerFiles, "home"),
      cacheHome: path.join(paths.data, "cache"),
      stateHome: path.join(paths.data, "state"),
    }
  }

  accountDir(state) {
    return path.join(state, "accounts", "account")
  }

  accountDb(state) {
    return path.join(this.accountDir(state), "opencode.db")
  }

  // The account's credential (boundary's runner secret stands for one, e.g. an API key) is kept with the
  // account, out of every job's reach: srt denies the shell the whole state, and the guard holds the file
  // tools to the job's roots. Only the runner reads it. Returns the files that hold it.
  keepSecret(state) {
    const secret = this.env.BOUNDARY_RUNNER_SECRET
    if (!secret) return []
    const file = this.credentialsFile(state)
    fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 })
    return [file]
  }

  credentialsFile(state) {
    return path.join(this.accountDir(state), "credentials")
  }

  setupRecord(state) {
    return path.join(state, "runner.json")
  }

  // A job's paths never overlap an earlier job's: a name is used once until its job is removed.
  refuseExisting(paths) {
    const existing = [paths.checkout, paths.runnerFiles, paths.tmp].find((p) => fs.existsSync(p))
    if (existing) throw new RunnerError(`job ${paths.name}: ${existing} exists already (a job of that name was not removed?)`)
  }

  removeJobPaths(paths) {
    for (const directory of [paths.checkout, paths.data, paths.runnerFiles, paths.tmp]) {
      fs.rmSync(directory, { recursive: true, force: true })
    }
  }

  // -- preparing a job -------------------------------------------------------------------------------------

  prepareJob(paths, modelUrl) {
    this.checkOut(paths)
    const configDir = this.seedConfigDir(paths)
    const guard = this.installGuard(paths)
    const config = this.opencodeConfig(paths, modelUrl, guard)
    fs.writeFileSync(path.join(configDir, "opencode.json"), JSON.stringify(config, null, 2))
    const shell = this.writeShellWrapper(paths)
    // Last: the launcher binds read-only every file written before it.
    const argv = this.writeLauncher(paths, this.agentArgv())
    return {
      argv,
      env: this.jobEnv(paths, shell),
      checkout: paths.checkout,
      data: paths.data,
      tmp: paths.tmp,
      runner_files: paths.runnerFiles,
      files: filesUnder(paths.runnerFiles),
      hooks: [],
    }
  }

  // The job's own clone of the repository (its own objects: a local clone hard-links them to every other job's),
  // and the directories it is given.
  checkOut(paths) {
    git("clone", "-q", "--no-hardlinks", this.repository(paths.state), paths.checkout)
    const dirs = this.agentDirs(paths)
    for (const directory of [paths.data, paths.tmp, ...Object.values(dirs)]) {
      fs.mkdirSync(directory, { recursive: true })
    }
  }

  repository(state) {
    try {
      return JSON.parse(fs.readFileSync(this.setupRecord(state), "utf8")).repository
    } catch (error) {
      throw new RunnerError(`no repository recorded under ${state} (${error.message}): call setup first`)
    }
  }

  // opencode's config directory, with @opencode-ai/plugin pre-installed so opencode installs nothing at start.
  seedConfigDir(paths) {
    const directory = path.join(this.agentDirs(paths).configHome, "opencode")
    const sdk = findOpencodeSdk(this.env)
    fs.mkdirSync(directory, { recursive: true })
    for (const name of ["package.json", "package-lock.json"]) {
      if (fs.existsSync(path.join(sdk, name))) fs.copyFileSync(path.join(sdk, name), path.join(directory, name))
    }
    fs.symlinkSync(path.join(sdk, "node_modules"), path.join(directory, "node_modules"))
    return directory
  }

  // The job loads its own copy of the guard, among its runner files: read-only to it, and unchanged by later
  // edits to the runner's source while it runs.
  installGuard(paths) {
    const guard = path.join(paths.runnerFiles, "guard.js")
    fs.copyFileSync(GUARD_SOURCE, guard)
    return guard
  }

  opencodeConfig(paths, modelUrl, guard) {
    const provider = {
      npm: "@ai-sdk/openai-compatible",
      options: { baseURL: modelUrl, apiKey: "scripted" },
      models: { m: { name: "m" } },
    }
    return {
      $schema: "https://opencode.ai/config.json",
      provider: { scripted: provider },
      model: "scripted/m",
      autoupdate: false,
      share: "disabled",
      // No undo in a headless job: without this, each step runs some twenty git commands to snapshot the tree.
      snapshot: false,
      permission: this.permission(paths),
      plugin: this.env.RUNNER_GUARD === "off" ? [] : [[pathToFileURL(guard).href, this.guardOptions(paths)]],
      // Removed three times over: not offered (here), denied (permission), refused (guard).
      tools: Object.fromEntries(this.removedTools().map((pattern) => [pattern, false])),
    }
  }

  // Agent rules: no directory outside the checkout but the job's own data; opencode's server tools denied.
  permission(paths) {
    const removed = Object.fromEntries(this.removedTools().map((pattern) => [pattern, "deny"]))
    if (this.env.RUNNER_PERMISSIONS === "off") return { external_directory: "allow", ...removed }
    return { external_directory: { "*": "deny", [`${paths.data}/*`]: "allow" }, ...removed }
  }

  removedTools() {
    return FORBIDDEN_TOOLS
  }

  // The guard's roots: file tools read the checkout and data directory, write only the checkout, and never
  // what configures the agent or git.
  guardOptions(paths) {
    return {
      roots: [paths.checkout, paths.data],
      writeRoots: [paths.checkout],
      protected: this.protectedPaths(paths),
      forbiddenTools: this.removedTools(),
    }
  }

  protectedPaths(paths) {
    return PROJECT_PROTECTED.map((relative) => path.join(paths.checkout, relative))
  }

  // What the shell may see and change: none of the runner's state but its own checkout and TMPDIR.
  shellPolicy(paths) {
    return {
      denyRead: [paths.state],
      allowRead: [paths.checkout, paths.tmp],
      allowWrite: [paths.checkout, paths.tmp],
      denyWrite: this.protectedPaths(paths),
    }
  }

  writeShellWrapper(paths) {
    const wrapper = path.join(paths.runnerFiles, "shell")
    writeExecutable(wrapper, this.sandbox.wrapper(this.shellPolicy(paths), paths, this.env))
    return wrapper
  }

  agentArgv() {
    return [findTool("opencode", this.env), "run", "--model", "scripted/m", "go"]
  }

  writeLauncher(paths, agentArgv) {
    const launcher = path.join(paths.runnerFiles, "launch")
    const readonly = [...filesUnder(paths.runnerFiles), launcher]
    writeExecutable(launcher, launcherScript(readonly, paths.checkout, PROJECT_AGENT_PATHS))
    return [launcher, ...agentArgv]
  }

  // The job's whole environment: nothing of the runner's leaks in but PATH, LANG and TERM.
  jobEnv(paths, shell) {
    const dirs = this.agentDirs(paths)
    const kept = Object.fromEntries(KEPT_ENV.filter((key) => key in this.env).map((key) => [key, this.env[key]]))
    return {
      ...kept,
      ...QUIET_ENV,
      HOME: dirs.home,
      XDG_DATA_HOME: paths.data,
      XDG_CONFIG_HOME: dirs.configHome,
      XDG_CACHE_HOME: dirs.cacheHome,
      XDG_STATE_HOME: dirs.stateHome,
      TMPDIR: paths.tmp,
      OPENCODE_DB: this.accountDb(paths.state),
      SHELL: shell,
      ...NO_PROJECT_CONFIG,
    }
  }

  // -- checking what boundary passes -----------------------------------------------------------------------

  checkedState(state) {
    if (!state || !path.isAbsolute(state)) throw new RunnerError(`STATE must be an absolute path, got ${JSON.stringify(state)}`)
    if (!fs.statSync(state, { throwIfNoEntry: false })?.isDirectory()) throw new RunnerError(`STATE ${state} is not a directory`)
    return path.resolve(state)
  }

  stateFromEnv() {
    if (!this.env.BOUNDARY_STATE) throw new RunnerError("BOUNDARY_STATE is not set: call setup first")
    return this.checkedState(this.env.BOUNDARY_STATE)
  }

  // A name becomes a path component: nothing that could climb out of the state or alias another job's data.
  checkedName(name) {
    if (!name || !JOB_NAME.test(name) || name === "." || name === "..") {
      throw new RunnerError(`job name ${JSON.stringify(name)}: expected [A-Za-z0-9_.-]+, not . or ..`)
    }
    return name
  }
}

function checkedModelUrl(modelUrl) {
  let url
  try {
    url = new URL(modelUrl)
  } catch {
    throw new RunnerError(`MODEL_URL ${JSON.stringify(modelUrl)} is not a URL`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new RunnerError(`MODEL_URL ${modelUrl}: expected http(s)`)
}

// --- The command line ----------------------------------------------------------------------------------------

const VERBS = {
  describe: { args: [], call: (runner) => runner.describe() },
  setup: { args: ["STATE", "REPOSITORY"], call: (runner, state, repository) => runner.setup(state, repository) },
  "create-job": { args: ["NAME", "MODEL_URL"], call: (runner, name, url) => runner.createJob(name, url) },
  "remove-job": { args: ["NAME"], call: (runner, name) => runner.removeJob(name) },
}

function usage() {
  return Object.entries(VERBS).map(([verb, { args }]) => `  ${[verb, ...args].join(" ")}`).join("\n")
}

// Runs one verb; prints its JSON answer on stdout and returns the exit status. `makeRunner` builds the
// runner after the arguments are checked, so a bad BOUNDARY_SANDBOX is reported as a failed call too.
export function main(args, makeRunner = (env) => new OpencodeRunner(env), env = process.env) {
  const [verb, ...rest] = args
  try {
    const spec = VERBS[verb]
    if (!spec) throw new UsageError(`unknown verb ${JSON.stringify(verb ?? "")}; expected one of:\n${usage()}`)
    if (rest.length !== spec.args.length) throw new UsageError(`usage: ${[verb, ...spec.args].join(" ")}`)
    const answer = spec.call(makeRunner(env), ...rest)
    process.stdout.write(`${JSON.stringify(answer)}\n`)
    return 0
  } catch (error) {
    if (!(error instanceof RunnerError)) throw error // a bug: let Node print its stack
    process.stderr.write(`runner${verb ? ` ${verb}` : ""}: ${error.message}\n`)
    return error instanceof UsageError ? 2 : 1
  }
}

// Node 24 sets import.meta.main: true when this file is run, false when a variant imports it.
if (import.meta.main === undefined) {
  process.stderr.write(`runner: needs Node.js 24 or later (this is ${process.version})\n`)
  process.exit(2)
}
if (import.meta.main) process.exitCode = main(process.argv.slice(2))
