#!/usr/bin/env bash
# Sabotage control (must FAIL): runner.sh handing the account's API key to codex in its environment
# (OPENAI_API_KEY, the provider's env_key), as a runner without a key-holding proxy does: every scenario's
# runner_secret cell is LEAKED, naming the variable.
exec env CODEX_UNPRIVILEGED_SABOTAGE=key-in-env bash "$(dirname "$0")/runner.sh" "$@"
