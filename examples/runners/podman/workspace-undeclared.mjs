#!/usr/bin/env node
// A DEFECTIVE runner, on purpose: ./workspace.mjs that does not say where its jobs see their places (no
// `paths_inside`). boundary then names the host's paths to a job that has none of them: its controls on the job's
// own files fail, and every cell they vouch for is INCONCLUSIVE — never held.
import { main } from "../opencode/runner.mjs"
import { WorkspaceRunner } from "./workspace.mjs"

export class UndeclaredWorkspaceRunner extends WorkspaceRunner {
  name = "opencode-podman-workspace-undeclared"

  prepareJob(paths, modelUrl) {
    const { paths_inside, ...answer } = super.prepareJob(paths, modelUrl)
    return answer
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new UndeclaredWorkspaceRunner(env))
