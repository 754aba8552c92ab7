#!/usr/bin/env bash
# A desktop notification when a goal changes or goalkeeper needs you: a command hook for goal changes and
# "needs input" events (the hooks package), also usable as a Claude Code Notification or Stop hook.
# It reads the event's JSON on stdin and shows one line with notify-send. Where notify-send is missing
# (no desktop, macOS) it does nothing. It always exits 0: a notification never blocks the agent.
set -u
command -v notify-send >/dev/null 2>&1 || exit 0
command -v node >/dev/null 2>&1 || { notify-send --app-name=goalkeeper goalkeeper 'goalkeeper needs a look' 2>/dev/null; exit 0; }

line=$(node -e '
let text = ""
process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => {
  let event = {}
  try { event = JSON.parse(text) } catch {}
  const goal = event.goal || (event.data && event.data.goal) || {}
  const name = event.hook_event_name || event.event || event.type || "event"
  const code = goal.blockedReason ? ` (${goal.blockedReason.code})` : ""
  const line = goal.objective ? `${goal.phase || name}${code}: ${goal.objective}`
    : event.message || (event.tool_name ? `${name}: ${event.tool_name}` : name)
  process.stdout.write(String(line).replace(/\s+/g, " ").slice(0, 200))
})' 2>/dev/null) || line='goalkeeper needs a look'

notify-send --app-name=goalkeeper goalkeeper "${line:-goalkeeper needs a look}" 2>/dev/null || true
exit 0
