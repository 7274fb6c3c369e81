// boundary reference runner plugin for opencode.
// 1. Refuses to run any tool whose name matches a forbidden pattern (opencode's
//    own server tools run unconfined). The runner's config also removes them
//    from the list offered to the model; this is the second line.
// 2. Refuses a file tool whose path argument, after resolving symlinks,
//    leaves the job's roots (the file tools run in the unconfined server, so
//    the OS sandbox around the shell does not apply to them): reading may reach
//    `roots`, writing only `writeRoots`, and never a `protected` path (what
//    configures the agent or the runner's git: a job must not rewrite its own rules).
// 3. Refuses a `task` call that continues a session (`task_id`) this job's own
//    task calls did not start: the task tool runs in the unconfined server, and
//    with the account's shared database it would take up another job's session.
import fs from "node:fs"
import path from "node:path"

const PATH_ARGS = ["filePath", "path"]
const WRITE_TOOLS = new Set(["write", "edit", "patch", "multiedit", "apply_patch"])

function realpathLoose(candidate) {
  // realpath of the longest existing prefix, then the rest appended.
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

function globBase(pattern) {
  const parts = pattern.split("/")
  const cut = parts.findIndex((part) => /[*?[{]/.test(part))
  return (cut === -1 ? parts : parts.slice(0, cut)).join("/") || "/"
}

const under = (p, root) => p === root || p.startsWith(root + path.sep)

export const BoundaryGuard = async ({ directory }, options = {}) => {
  const roots = (options.roots ?? []).map(realpathLoose)
  const writeRoots = (options.writeRoots ?? options.roots ?? []).map(realpathLoose)
  const protectedPaths = (options.protected ?? []).map(realpathLoose)
  const toRegExp = (glob) => new RegExp("^" + glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*") + "$")
  const forbidden = (options.forbiddenTools ?? []).map(toRegExp)
  const refuse = (why) => {
    throw new Error(`boundary guard: ${why}`)
  }
  const ownTasks = new Set() // the sessions this job's task calls started: the only ones it may continue
  return {
    "tool.execute.after": async ({ tool }, output) => {
      const started = output?.metadata?.sessionId
      if (tool === "task" && typeof started === "string") ownTasks.add(started)
    },
    "tool.execute.before": async ({ tool }, output) => {
      if (forbidden.some((re) => re.test(tool))) refuse(`tool ${tool} is not allowed`)
      const args = output.args ?? {}
      if (tool === "task" && args.task_id && !ownTasks.has(args.task_id) && options.continueAnyTask !== true) {
        refuse(`task ${args.task_id} was not started by this job: it may not continue it`)
      }
      if (tool === "apply_patch" || tool === "patch") refuse(`${tool} names its paths inside a patch: not allowed`)
      const candidates = PATH_ARGS.filter((key) => typeof args[key] === "string").map((key) => args[key])
      if (typeof args.pattern === "string" && args.pattern.startsWith("/") && tool === "glob") candidates.push(globBase(args.pattern))
      const writing = WRITE_TOOLS.has(tool)
      for (const value of candidates) {
        const resolved = realpathLoose(path.resolve(directory, value))
        if (!(writing ? writeRoots : roots).some((root) => under(resolved, root))) {
          refuse(`${tool} path ${value} resolves to ${resolved}, outside this job's ${writing ? "writable " : ""}roots`)
        }
        if (writing && protectedPaths.some((p) => under(resolved, p))) {
          refuse(`${tool} path ${value} resolves to ${resolved}, which configures the agent or the runner`)
        }
      }
    },
  }
}
