#!/usr/bin/env node
// A DEFECTIVE runner, on purpose: ./runner.mjs with one change. Each sandbox uses the host's network
// (`runsc --network=host`) "so the agent reaches the model without a bridge": gVisor's Sentry then opens its
// sockets in the job's network namespace, and every service listening on its loopback (a runner's API, a
// metadata proxy) answers the job's shell. boundary's reach scenario must report LEAKED against it.
import { main } from "../opencode/runner.mjs"
import { GvisorRunner } from "./runner.mjs"

export class HostNetworkRunner extends GvisorRunner {
  name = "opencode-gvisor-host-network"

  sandboxNetwork() {
    return "host"
  }
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2), (env) => new HostNetworkRunner(env))
