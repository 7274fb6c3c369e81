#!/usr/bin/env bash
# Sabotage control (must FAIL): runner.sh with every job run as the one `codex` user of the account and a
# group-writable checkout, and nothing else keeping jobs apart (the per-job permission profile): job B reads
# job A's checkout, and cross_job reports LEAKED.
exec env CODEX_UNPRIVILEGED_SABOTAGE=shared-uid bash "$(dirname "$0")/runner.sh" "$@"
