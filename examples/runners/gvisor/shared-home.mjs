#!/usr/bin/env node
// A DEFECTIVE runner, on purpose: ./runner.mjs with one change. Every job's sandbox gets the account's home
// directory, one for all jobs, mounted read-write as HOME "so tools keep their settings and caches between jobs".
// gVisor's own kernel per job changes nothing about a directory every job is given: what one job leaves in it the
// next reads. boundary's sweep must report LEAKED against it.
import fs from "node:fs"
import path from "node:path"
import { main } from "../opencode/runner.mjs"
import { GvisorRunner } from "./runner.mjs"

export class SharedHomeRunner extends GvisorRunner {
  name = "opencode-gvisor-shared-home"

  accountHome(state) {
    return path.join(this.accountDir(state), "home")
  }

  prepareJob(paths, modelUrl) {
    fs.mkdirSync(this.accountHome(paths.state), { recursive: true })
    return super.prepareJob(paths, modelUrl)
  }

  mounts(paths) {
    const mounts = super.mounts(paths)
    return { ...mounts, readWrite: [...mounts.readWrite, [this.accountHome(paths.state), this.accountHome(paths.state)]] }
  }

  jobEnv(paths, shell) {
    return { ...super.jobEnv(paths, shell), HOME: this.accountHome(paths.state) }
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new SharedHomeRunner(env))
