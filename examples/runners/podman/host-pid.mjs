#!/usr/bin/env node
// A DEFECTIVE runner, on purpose: ./runner.mjs with one change. Every job's container shares the PID namespace
// the runner starts it in (`--pid=host`, "so the runner can watch the agent"): one job's shell reads another's
// processes — their environment, open files and working directory. boundary's sweep must report LEAKED.
import { main } from "../opencode/runner.mjs"
import { PodmanRunner } from "./runner.mjs"

export class HostPidRunner extends PodmanRunner {
  name = "opencode-podman-host-pid"

  isolation() {
    return [...super.isolation(), "--pid=host"]
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new HostPidRunner(env))
