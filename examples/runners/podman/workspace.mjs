#!/usr/bin/env node
// ./runner.mjs with each job's places where production containers put them, not at their host paths: the
// checkout at /workspace, its data directory at /job/data, its TMPDIR at /job/tmp and its runner files (the
// agent's HOME and config among them) at /job/runner. `create-job` says so in `paths_inside`, so boundary
// names every path to the job where the job sees it, and reads the job's answers back in host paths.
// The agent's configuration names the paths inside too: the guard's roots, the permission rules, the plugin.
import { main } from "../opencode/runner.mjs"
import { PodmanRunner } from "./runner.mjs"

export class WorkspaceRunner extends PodmanRunner {
  name = "opencode-podman-workspace"

  seenInside(paths) {
    if (!this.contained) return []
    return [
      [paths.checkout, "/workspace"],
      [paths.data, "/job/data"],
      [paths.tmp, "/job/tmp"],
      [paths.runnerFiles, "/job/runner"],
    ]
  }

  // The agent reads its configuration inside: every path in it is one the container sees.
  opencodeConfig(paths, modelUrl, guard) {
    const inside = { ...paths }
    for (const key of ["checkout", "data", "tmp", "runnerFiles"]) inside[key] = this.seen(paths, paths[key])
    return super.opencodeConfig(inside, modelUrl, this.seen(paths, guard))
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new WorkspaceRunner(env))
