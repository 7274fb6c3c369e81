#!/usr/bin/env node
// A DEFECTIVE runner, on purpose: ./runner.mjs with one change. Every job's container uses the network of the
// namespace the runner starts it in (`--network=host`, "so the agent reaches the model without a bridge"): the
// account's jobs share their listeners and abstract unix sockets. boundary's sweep must report LEAKED.
import { main } from "../opencode/runner.mjs"
import { PodmanRunner } from "./runner.mjs"

export class HostNetworkRunner extends PodmanRunner {
  name = "opencode-podman-host-network"

  isolation() {
    return [...super.isolation().filter((option) => !option.startsWith("--network=")), "--network=host"]
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new HostNetworkRunner(env))
