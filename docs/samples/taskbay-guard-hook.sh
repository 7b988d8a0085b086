#!/bin/sh
# .claude/hooks/taskbay-guard.sh  (settings: hooks.PreToolUse, matcher "Bash")
cmd=$(jq -r '.tool_input.command // empty')
case "$cmd" in ""|"taskbay guard "*) exit 0 ;; esac          # nothing to do, or already guarded
printf '%s' "$cmd" | grep -Eq '(^|[;&|[:space:]])(rm|git push|terraform|kubectl|dropdb)([[:space:]]|$)' || exit 0
jq -n --arg c "taskbay guard --risk high -- sh -c $(printf '%s' "$cmd" | jq -Rr @sh)" \
  '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: {command: $c}}}'
