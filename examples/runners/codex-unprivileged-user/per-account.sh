#!/usr/bin/env bash
# The action's own shape: one `codex` user for the account (see runner.sh's header).
exec env CODEX_UNPRIVILEGED_SHAPE=account bash "$(dirname "$0")/runner.sh" "$@"
