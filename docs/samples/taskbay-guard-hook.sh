#!/bin/sh
# .claude/hooks/taskbay-guard.sh  (settings: hooks.PreToolUse, matcher "Bash"): wraps a risky
# command in `taskbay guard`, which waits inside the Bash call (110 s by default, under the Bash
# tool's 120 s) and runs the command once after approval. Whatever goes wrong blocks (exit 2).
command -v jq >/dev/null 2>&1 || { echo 'taskbay-guard.sh: jq is not on the PATH; blocked' >&2; exit 2; }
command -v taskbay >/dev/null 2>&1 || { echo 'taskbay-guard.sh: taskbay is not on the PATH (npm install -g agent-taskbay); blocked' >&2; exit 2; }
input=$(cat)
cmd=$(printf '%s' "$input" | jq -er '.tool_input.command | strings') || { echo 'taskbay-guard.sh: no tool_input.command; blocked' >&2; exit 2; }
printf '%s' "$cmd" | grep -Eq '(^|[;&|[:space:]])(rm|git push|terraform|kubectl|dropdb)([[:space:]]|$)' || exit 0
printf '%s' "$input" | jq -c --arg c "taskbay guard --risk high -- sh -c $(printf '%s' "$cmd" | jq -Rsr @sh)" \
  '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: (.tool_input + {command: $c})}}' || exit 2
