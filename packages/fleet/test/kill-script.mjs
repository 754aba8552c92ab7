// The scripted model of the kill-at-every-point test: stateless steps driven by the request. It believes
// the history it is sent, as a model does: a file counts as written when a write_file call for it succeeded
// in a message it sees, unless a later `<workspace_rewound>` notice says that work is gone.
// Round 1 writes result.txt, round 2 writes notes.txt, the next round writes done.txt and completes the
// goal (each first writes what the history does not show written). With FLEET_HOLD set, a goal whose
// objective names `hold:<point>` announces the point on stderr and waits forever there: before-write (round 2 before it writes), after-write (round 2 once notes.txt
// is written), after-record (round 3, after round 2's push was recorded).
import { completeGoal, many, opening, roundOf, say, textOf } from '@goalkeeper/test-kit/model-script'

const NOTICE = '<workspace_rewound>'
const argsOf = (call) => (typeof call.arguments === 'string' ? JSON.parse(call.arguments) : call.arguments)

/** Files a run of messages says were written (every one, or those after the last rewind notice). */
function writtenIn(messages) {
  const from = messages.findLastIndex((message) => message.role === 'user' && textOf(message).startsWith(NOTICE)) + 1
  const paths = new Map()
  const written = new Set()
  for (const message of messages.slice(from)) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) if (call.name === 'write_file') paths.set(call.id, argsOf(call).path)
    if (message.role === 'tool' && message.ok && paths.has(message.callId)) written.add(paths.get(message.callId))
  }
  return written
}

const hang = (line) => {
  say(line)
  return new Promise(() => {})
}

const step = async (request) => {
  const all = request.messages.map(textOf).join('\n')
  const name = /goal-\d+/.exec(all)?.[0] ?? 'unknown'
  const hold = process.env.FLEET_HOLD ? /hold:([a-z-]+)/.exec(all)?.[1] : undefined
  const start = opening(request)
  if (start.text.startsWith(NOTICE)) return { text: 'Understood: I will check the workspace and redo the lost work.' }
  const round = roundOf(request)
  const turn = request.messages.slice(start.index + 1)
  const results = turn.filter((message) => message.role === 'tool')
  const files = writtenIn(request.messages)
  const now = writtenIn(turn)
  if (round === 2 && hold === 'before-write' && !results.length) return hang(`holding before-write of ${name}`)
  if (round === 2 && hold === 'after-write' && now.has('notes.txt')) return hang(`holding after-write of ${name}`)
  if (round === 3 && hold === 'after-record' && !results.length) return hang(`holding after-record of ${name}`)
  const write = (path, content) => ({ text: `Writing ${path}.`, toolCalls: [{ name: 'write_file', arguments: { path, content } }] })
  const next = { text: 'Written; the next round goes on from here.' }
  if (!files.has('result.txt')) return write('result.txt', `${name} result\n`)
  if (round < 2) return next
  if (!files.has('notes.txt')) return write('notes.txt', `${name} notes\n`)
  if (now.has('notes.txt')) return next
  // The completing round writes done.txt first: its push is the goal's last.
  if (!files.has('done.txt')) return write('done.txt', `${name} done\n`)
  return completeGoal(request)
}

export default many(step, 400)
