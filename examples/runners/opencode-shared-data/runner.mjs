#!/usr/bin/env node
// A DEFECTIVE runner, on purpose: ../opencode/runner.mjs with one change. Every job of the account shares
// one data directory (XDG_DATA_HOME), as the runner of incident 1 in boundary's DESIGN.md did. opencode
// saves large tool output and shell captures there and lets the `read` tool read that directory, so one
// job reads what another saved. boundary's cross_job scenario must report LEAKED against it; a green run
// would be a defect of the harness, not a virtue of this runner.
import path from "node:path"
import { main, OpencodeRunner } from "../opencode/runner.mjs"

export class SharedDataRunner extends OpencodeRunner {
  name = "opencode-shared-data"

  // The one change: `<state>/checkouts/shared.data` for every job, instead of `<checkout>.data` per job.
  jobPaths(state, name) {
    const paths = super.jobPaths(state, name)
    return { ...paths, data: path.join(path.dirname(paths.checkout), "shared.data") }
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new SharedDataRunner(env))
