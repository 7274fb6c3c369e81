// The runner's guard: an opencode plugin that the runner names in each job's config.
//
// opencode's file tools (read, write, edit, grep, glob) run in the agent process, which no OS sandbox
// confines: srt wraps only the shell. Permission rules alone do not hold them either: `read` follows a
// symlink in the checkout to wherever it points, and opencode's own server tools (`opencode_*`) act on
// the account's shared database. So before each tool call the guard
//   1. refuses a tool whose name matches a forbidden pattern (the config also removes them from the list
//      offered to the model; this is the second line);
//   2. resolves the path a file tool names, symlinks included, and refuses it outside the job's roots:
//      reading may reach `roots` (checkout and data directory), writing only `writeRoots` (the checkout),
//      and never a `protected` path (what configures the agent, and git's hooks and config: a job must
//      not rewrite its own rules, or the code the runner's next git command runs);
//   3. refuses a `task` call that continues a session (`task_id`) the job's own task calls did not start:
//      the task tool runs in the agent process, and the account's shared database holds every job's
//      sessions, so a job handed another's session id would take that session up.
//
// Every refusal starts with "runner guard:", the text the runner's `describe` names for this layer.
//
// opencode calls every function this module exports as a plugin: export nothing else.
import fs from "node:fs"
import path from "node:path"

const DENIAL = "runner guard:"
const PATH_ARGS = ["filePath", "path"]
const WRITE_TOOLS = new Set(["write", "edit", "patch", "multiedit", "apply_patch"])
const PATCH_TOOLS = new Set(["patch", "apply_patch"])

// The real path of `candidate` even when it does not exist yet (a file about to be written): the real path
// of its longest existing prefix, with the rest appended. A symlinked parent is resolved all the same.
function realpathLoose(candidate) {
  let head = path.resolve(candidate)
  const tail = []
  for (;;) {
    try {
      return path.join(fs.realpathSync(head), ...tail.reverse())
    } catch {
      const parent = path.dirname(head)
      if (parent === head) return path.resolve(candidate)
      tail.push(path.basename(head))
      head = parent
    }
  }
}

// The directory an absolute glob pattern searches from: everything before its first wildcard.
function globBase(pattern) {
  const parts = pattern.split("/")
  const cut = parts.findIndex((part) => /[*?[{]/.test(part))
  return (cut === -1 ? parts : parts.slice(0, cut)).join("/") || "/"
}

// Inside `root`, compared by path component: `/x/job` must not admit `/x/job-evil` (a string-prefix check would).
const under = (candidate, root) => candidate === root || candidate.startsWith(root + path.sep)

function globToRegExp(glob) {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*")
  return new RegExp(`^${escaped}$`)
}

function refuse(why) {
  throw new Error(`${DENIAL} ${why}`)
}

// The paths a tool call names: its path arguments, and the base of an absolute glob pattern.
function namedPaths(tool, args) {
  const named = PATH_ARGS.filter((key) => typeof args[key] === "string").map((key) => args[key])
  if (tool === "glob" && typeof args.pattern === "string" && args.pattern.startsWith("/")) {
    named.push(globBase(args.pattern))
  }
  return named
}

export const RunnerGuard = async ({ directory }, options = {}) => {
  // Roots are resolved once, at start: the runner's own paths, which no job can move before this runs.
  const roots = (options.roots ?? []).map(realpathLoose)
  const writeRoots = (options.writeRoots ?? options.roots ?? []).map(realpathLoose)
  const protectedPaths = (options.protected ?? []).map(realpathLoose)
  const forbidden = (options.forbiddenTools ?? []).map(globToRegExp)
  const ownTasks = new Set() // the sessions this job's task calls started: the only ones it may continue

  return {
    "tool.execute.after": async ({ tool }, output) => {
      const started = output?.metadata?.sessionId
      if (tool === "task" && typeof started === "string") ownTasks.add(started)
    },
    "tool.execute.before": async ({ tool }, output) => {
      if (forbidden.some((pattern) => pattern.test(tool))) refuse(`tool ${tool} is not allowed`)
      const taskId = output.args?.task_id
      if (tool === "task" && taskId && !ownTasks.has(taskId)) refuse(`task ${taskId} was not started by this job`)
      // A patch names its files inside its text, where no argument check can see them.
      if (PATCH_TOOLS.has(tool)) refuse(`${tool} names its paths inside a patch: not allowed`)
      const writing = WRITE_TOOLS.has(tool)
      const allowed = writing ? writeRoots : roots
      for (const value of namedPaths(tool, output.args ?? {})) {
        const resolved = realpathLoose(path.resolve(directory, value))
        if (!allowed.some((root) => under(resolved, root))) {
          refuse(`${tool} path ${value} resolves to ${resolved}, outside this job's ${writing ? "writable " : ""}roots`)
        }
        if (writing && protectedPaths.some((p) => under(resolved, p))) {
          refuse(`${tool} path ${value} resolves to ${resolved}, which configures the agent or the runner`)
        }
      }
    },
  }
}
