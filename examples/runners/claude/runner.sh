#!/usr/bin/env bash
# A runner of Claude Code jobs in bash, speaking boundary's runner protocol (docs/runner-protocol.md):
#
#   bash runner.sh describe                    the agent, the sandbox, each layer's refusals (by reference), the tools
#   bash runner.sh setup STATE REPOSITORY      the account's state for jobs of REPOSITORY; keeps BOUNDARY_RUNNER_SECRET
#   bash runner.sh create-job NAME MODEL_URL   check out and configure one job; print how it is launched
#   bash runner.sh remove-job NAME             remove what create-job made
#
# What keeps a job in (the two layers `describe` claims):
# - agent permission: Claude Code's Read, Edit, Grep and Glob run in the agent process, which no OS sandbox
#   confines here, so deny rules keep them off the account, the runner's files, every job's data and every
#   other job's checkout (`all_but`: Claude Code's rules cannot say "every checkout but mine").
# - OS sandbox: Claude Code runs every shell command in its sandbox (failing if it cannot), which hides STATE
#   but the job's checkout and TMPDIR, and keeps the checkout's agent files and .git read-only. A launcher
#   (bwrap) hides what the checkout carries for agents (.claude, CLAUDE.md, .mcp.json, …) at every start.
# Settings come from the runner's file alone (`--setting-sources ""`), hooks are off, no MCP server is loaded.
# The API key stays with the runner (a proxy in front of the model adds it); the job gets a placeholder.
#
# Sabotage control (CLAUDE_EXAMPLE_SABOTAGE=skip-permissions, wrapper skip-permissions.sh), which must FAIL:
# permissions skipped, as CI runners often do, so the file tools read other jobs' files from the agent process.
#
# Layout under STATE:
#   accounts/account/{credentials,repository}   the runner secret (0600) and the repository jobs clone
#   checkouts/<job>/  checkouts/<job>.data/claude/   the checkout; the job's CLAUDE_CONFIG_DIR
#   runner/<job>/{settings.json,launch,home/}        the job's settings, launcher and HOME
#   tmp/<job>/                                       its TMPDIR
set -euo pipefail
umask 022

readonly JOB_NAME_RE='^[A-Za-z0-9_.-]+$'
readonly PATH_RE='^/[A-Za-z0-9_./+-]+$' # written into JSON and a script unquoted: nothing to escape
readonly URL_RE='^https?://[A-Za-z0-9._~:/?#@!$&()*+,;=%-]+$'
readonly TOOLS=Bash,Edit,Glob,Grep,Read,Write
readonly HIDDEN=(.claude .mcp.json CLAUDE.md CLAUDE.local.md AGENTS.md .agents)
readonly PROTECTED=("${HIDDEN[@]}" .git)
# Claude Code's sandbox lets every sandbox write these once they exist: one job would leave there what the next reads.
readonly SHARED_DEFAULTS=(/tmp/claude "~/.npm/_logs" "~/.claude/debug")
# Claude Code reaches out at start unless told not to; and every offered tool goes in every request.
readonly QUIET=(CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
  DISABLE_AUTOUPDATER=1 ENABLE_TOOL_SEARCH=false CLAUDE_CODE_MODEL_CATALOG=off
  CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1)
readonly SAFE_GIT=(-c core.hooksPath=/dev/null -c core.fsmonitor=false -c protocol.file.allow=always)

die() {
  echo "claude runner: $*" >&2
  exit 1
}

checked() { # NAME VALUE REGEX: the value, or a clear stop
  [[ $2 =~ $3 && $2 != *..* ]] || die "$1: expected to match $3, got '$2'"
  printf '%s' "$2"
}

json_list() { # strings already checked to need no escaping
  local out="" item
  for item in "$@"; do out+="${out:+,}\"$item\""; done
  printf '[%s]' "$out"
}

tool() { # $1 from boundary's pinned tools, else from PATH: absolute, so the job's PATH cannot choose it
  local found=${BOUNDARY_TOOLS_BIN:+$BOUNDARY_TOOLS_BIN/$1}
  [[ -n $found && -x $found ]] || found=$(command -v "$1") || die "cannot find $1: BOUNDARY_TOOLS_BIN is not set and there is no $1 on PATH"
  printf '%s' "$found"
}

# Every path pattern under DIR that matches a job name other than NAME (docs/runner-protocol.md).
all_but() {
  local dir=$1 name=$2 chars=abcdefghijklmnopqrstuvwxyz0123456789_.- i=0 c
  while [ "$i" -lt "${#name}" ]; do
    c=$(printf %s "${name:$i:1}" | tr A-Z a-z)
    printf '%s/%s[%s]*\n' "$dir" "${name:0:$i}" "${chars//"$c"/}"
    i=$((i + 1))
  done
  printf '%s/%s?*\n' "$dir" "$name"
  for ((i = 1; i < ${#name}; i++)); do printf '%s/%s\n' "$dir" "${name:0:$i}"; done
}

describe() {
  case ${BOUNDARY_SANDBOX:-claude} in claude) ;; *) die "BOUNDARY_SANDBOX=$BOUNDARY_SANDBOX: this runner only runs Claude Code's own sandbox" ;; esac
  local claude version
  claude=$(tool claude)
  version=$("$claude" --version) && version=${version%% *} # "2.1.332 (Claude Code)"
  [[ $version =~ ^[0-9][0-9A-Za-z.+-]*$ ]] || die "claude --version: expected a version, got '$version'"
  printf '{"protocol":1,"name":"claude-example","agent":"claude","sandbox":"claude","sandbox_version":"%s",' "$version"
  printf '"denials":{"agent permission":"agent","OS sandbox":"claude"},'
  printf '"expected_tools":%s,"forbidden_tools":["mcp__*"]}\n' "$(json_list ${TOOLS//,/ })"
}

setup() {
  local state account
  state=$(checked STATE "$1" "$PATH_RE")
  [[ -d $2 ]] || die "setup: REPOSITORY $2 is not a directory"
  account=$state/accounts/account
  mkdir -p "$account" "$state/checkouts" "$state/runner" "$state/tmp"
  chmod 700 "$account"
  printf '%s\n' "$2" >"$account/repository"
  local credentials='[]'
  if [[ -n ${BOUNDARY_RUNNER_SECRET:-} ]]; then
    (umask 077 && printf '%s\n' "$BOUNDARY_RUNNER_SECRET" >"$account/credentials")
    credentials=$(json_list "$account/credentials")
  fi
  printf '{"account_db":null,"account_dir":"%s","credentials":%s}\n' "$account" "$credentials"
}

settings() { # STATE NAME CHECKOUT TMP
  local state=$1 name=$2 checkout=$3 tmp=$4 place others deny=()
  mapfile -t others < <(all_but "$state/checkouts" "$name")
  for place in "$state/accounts" "$state/runner" "$state/checkouts/*.data" "${others[@]}" "${PROTECTED[@]/#/$checkout/}"; do
    deny+=("Read(/$place)" "Read(/$place/**)" "Edit(/$place)" "Edit(/$place/**)")
  done
  local mode=acceptEdits # edits inside the working directory go ahead; print mode refuses the rest
  [[ ${CLAUDE_EXAMPLE_SABOTAGE:-} != skip-permissions ]] || deny=() mode=bypassPermissions
  cat <<EOF
{"sandbox": {"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false,
  "autoAllowBashIfSandboxed": true, "filesystem": {"denyRead": $(json_list "$state"),
  "allowRead": $(json_list "$checkout" "$tmp"), "allowWrite": $(json_list "$checkout" "$tmp"),
  "denyWrite": $(json_list "${PROTECTED[@]/#/$checkout/}" "${SHARED_DEFAULTS[@]}")}},
 "permissions": {"deny": $(json_list "${deny[@]}"), "defaultMode": "$mode"},
 "disableAllHooks": true, "enableAllProjectMcpServers": false}
EOF
}

launcher() { # CHECKOUT FILE...: the agent started with the checkout's agent files hidden, the FILEs read-only
  local checkout=$1 file
  shift
  printf '#!/bin/bash\nset -euo pipefail\nargs=(--dev-bind / / --die-with-parent --unshare-ipc)\n'
  for file in "$@"; do printf 'args+=(--ro-bind %s %s)\n' "$file" "$file"; done
  cat <<EOF
for relative in ${HIDDEN[*]}; do
  path=$checkout/"\$relative"
  if [ -d "\$path" ] && [ ! -L "\$path" ]; then args+=(--tmpfs "\$path")
  elif [ -e "\$path" ] || [ -L "\$path" ]; then args+=(--ro-bind /dev/null "\$path"); fi
done
exec bwrap "\${args[@]}" -- "\$@"
EOF
}

create_job() {
  local name url state checkout data runner tmp claude node env=() pair
  name=$(checked NAME "$1" "$JOB_NAME_RE")
  [[ $name != *.data ]] || die "create-job: a job named '$name' would land on another job's data directory"
  url=$(checked MODEL_URL "$2" "$URL_RE")
  state=$(checked BOUNDARY_STATE "${BOUNDARY_STATE:-}" "$PATH_RE")
  checkout=$state/checkouts/$name data=$state/checkouts/$name.data runner=$state/runner/$name tmp=$state/tmp/$name
  [[ ! -e $checkout ]] || die "create-job: job $name exists already"
  claude=$(tool claude)
  node=$(tool node)
  # --no-hardlinks: a local clone's objects would be one inode with every other job's
  git "${SAFE_GIT[@]}" clone -q --no-hardlinks "$(cat "$state/accounts/account/repository")" "$checkout" >&2
  mkdir -p "$data/claude" "$runner/home" "$tmp"
  settings "$state" "$name" "$checkout" "$tmp" >"$runner/settings.json"
  launcher "$checkout" "$runner/settings.json" "$runner/launch" >"$runner/launch"
  chmod 755 "$runner/launch"
  for pair in "${QUIET[@]}" "LANG=C.UTF-8" "PATH=${node%/*}:/usr/local/bin:/usr/bin:/bin" "HOME=$runner/home" \
    "CLAUDE_CONFIG_DIR=$data/claude" "TMPDIR=$tmp" "ANTHROPIC_BASE_URL=${url%/v1}" "ANTHROPIC_API_KEY=sk-ant-placeholder" \
    ${CLAUDE_EXAMPLE_SABOTAGE:+IS_SANDBOX=1}; do # (as root, Claude Code skips permissions only with IS_SANDBOX)
    env+=("\"${pair%%=*}\":\"${pair#*=}\"")
  done
  local argv=("$runner/launch" "$claude" -p go --output-format json --tools "$TOOLS" --setting-sources ""
    --settings "$runner/settings.json" --strict-mcp-config)
  printf '{"argv":%s,"env":{%s},"checkout":"%s","data":"%s","tmp":"%s","runner_files":"%s","files":%s}\n' \
    "$(json_list "${argv[@]}")" "$(IFS=, && echo "${env[*]}")" "$checkout" "$data" "$tmp" "$runner" \
    "$(json_list "$runner/settings.json" "$runner/launch")"
}

remove_job() {
  local name state
  name=$(checked NAME "$1" "$JOB_NAME_RE")
  state=$(checked BOUNDARY_STATE "${BOUNDARY_STATE:-}" "$PATH_RE")
  rm -rf "$state/checkouts/$name" "$state/checkouts/$name.data" "$state/runner/$name" "$state/tmp/$name"
  printf '{}\n'
}

case ${1:-} in
describe) describe ;;
setup) [[ $# -eq 3 ]] || die "usage: setup STATE REPOSITORY" && setup "$2" "$3" ;;
create-job) [[ $# -eq 3 ]] || die "usage: create-job NAME MODEL_URL" && create_job "$2" "$3" ;;
remove-job) [[ $# -eq 2 ]] || die "usage: remove-job NAME" && remove_job "$2" ;;
*) die "usage: runner.sh describe | setup STATE REPOSITORY | create-job NAME MODEL_URL | remove-job NAME" ;;
esac
