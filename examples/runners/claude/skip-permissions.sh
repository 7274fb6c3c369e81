#!/usr/bin/env bash
# The Claude Code example with the commonest defect of CI runners, which boundary must catch: permissions skipped
# (`bypassPermissions`, no deny rules: "the sandbox confines it"), while Claude Code's file tools run in the
# unconfined agent process and read every other job's files. Expected: cross_job LEAKED.
CLAUDE_EXAMPLE_SABOTAGE=skip-permissions exec bash "$(dirname "$0")/runner.sh" "$@"
