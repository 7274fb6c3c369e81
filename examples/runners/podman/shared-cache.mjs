#!/usr/bin/env node
// A DEFECTIVE runner, on purpose: ./runner.mjs with one change. Every job's container gets the account's package
// cache, one directory for all jobs, mounted read-write "so installs are fast" (npm's cache, named by
// npm_config_cache). What one job leaves there the next reads. boundary's sweep must report LEAKED against it.
import fs from "node:fs"
import path from "node:path"
import { main } from "../opencode/runner.mjs"
import { PodmanRunner } from "./runner.mjs"

const CACHE_INSIDE = "/var/cache/npm"

export class SharedCacheRunner extends PodmanRunner {
  name = "opencode-podman-shared-cache"

  cache(state) {
    return path.join(this.accountDir(state), "npm-cache")
  }

  prepareJob(paths, modelUrl) {
    fs.mkdirSync(this.cache(paths.state), { recursive: true })
    return super.prepareJob(paths, modelUrl)
  }

  mounts(paths) {
    const mounts = super.mounts(paths)
    return { ...mounts, readWrite: [...mounts.readWrite, [this.cache(paths.state), CACHE_INSIDE]] }
  }

  jobEnv(paths, shell) {
    return { ...super.jobEnv(paths, shell), npm_config_cache: CACHE_INSIDE }
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new SharedCacheRunner(env))
