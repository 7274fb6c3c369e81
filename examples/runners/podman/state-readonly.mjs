#!/usr/bin/env node
// A DEFECTIVE runner, on purpose: ./runner.mjs with one change. The runner's whole state is mounted read-only in
// every job's container "so the agent can read the account database" — and with it every other job's checkout and
// data, and the account's credential. Read-only is no boundary for reading: boundary's cross_job must report LEAKED.
import { main } from "../opencode/runner.mjs"
import { PodmanRunner } from "./runner.mjs"

export class StateReadOnlyRunner extends PodmanRunner {
  name = "opencode-podman-state-readonly"

  mounts(paths) {
    const mounts = super.mounts(paths)
    return { ...mounts, readOnly: [[paths.state, paths.state], ...mounts.readOnly] }
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new StateReadOnlyRunner(env))
