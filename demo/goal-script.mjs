// The offline demo model: what the `scripted` provider answers when no real model is configured.
//
// Every step is the same function of the request, so the script never goes out of step with the agent:
// it reads where the conversation is (which goal round, which tool results came back) and makes the next
// single model call's answer. A goal takes three rounds:
//   1. survey: list_dir, then read_file on every listed file, then a round summary;
//   2. write:  write_file NOTES.md built from what round 1 read, read it back to verify, summary;
//   3. finish: get_goal, update_goal complete with the goal id and revision it returned, final summary.
// Outside a goal round it explains what it is.
//
// The file is both a script module (default export: the steps, for `scripted.module`) and a plugin
// (cordis.yml: `name: ./demo/goal-script.mjs`, resolved next to cordis.yml whatever the working directory),
// which pushes the same steps into the registered `scripted` provider. Its `delayMs` slows every answer
// down, so that a person can watch the rounds or press Ctrl-C in the middle of one.
import Schema from 'schemastery'

/** More steps than any demo conversation needs; each one is a model call. */
const STEP_COUNT = 1000
const NOTES = 'NOTES.md'
/** The one goal this model knows (scripts/demo.mjs pursues it). */
export const DEMO_OBJECTIVE = 'Create NOTES.md in the workspace with a summary of every file in it'
const REAL_MODEL = 'export DEEPSEEK_API_KEY or OPENAI_API_KEY to use a real model (no edit of cordis.yml needed)'

export const name = 'demo-script'
export const inject = ['models']

export const Config = Schema.object({
  delayMs: Schema.natural().default(0).description('Wait this many milliseconds before each answer.'),
})

export const apply = (ctx, config) => {
  const scripted = ctx.models.get('scripted')
  if (!scripted || typeof scripted.push !== 'function') throw new Error('the scripted model provider is not registered')
  scripted.push(...steps(config.delayMs))
  // Another goal on this model would run the demo's survey in whatever workspace it is given and report
  // success: such a goal is blocked at once, with what to do instead. Real models never see this.
  ctx.on('goal/changed', (agent, change) => {
    const goal = change.goal
    if (agent.model !== 'scripted' || !goal || goal.phase !== 'active' || goal.objective === DEMO_OBJECTIVE) return
    if (change.op !== 'create' && change.op !== 'edit' && change.op !== 'resume') return
    // After the other listeners of this change (a front end says "goal set" first); before any round runs,
    // which the round driver starts from a later macrotask at the earliest.
    queueMicrotask(() => {
      const goals = ctx.get('goals')
      const live = goals?.get(agent)
      if (live?.id !== goal.id || live.revision !== goal.revision || live.phase !== 'active') return
      goals.block(agent, { id: goal.id, revision: goal.revision }, {
        code: 'demo-model-only',
        message: `the offline demo model only knows the demo goal ("${DEMO_OBJECTIVE}"); ${REAL_MODEL}`,
      })
    })
  })
}

export default steps()

function steps(delayMs = 0) {
  // The scripted provider ends a step's delay at once when the request is aborted (Ctrl-C).
  const step = delayMs ? (request) => ({ ...answer(request), delayMs }) : answer
  return Array.from({ length: STEP_COUNT }, () => step)
}

/** One model call: the request in, the reply out. */
export function answer(request) {
  const messages = request.messages ?? []
  const start = turnStart(messages)
  const opening = start < 0 ? '' : textOf(messages[start])
  if (!opening.startsWith('<goal_round>')) return humanReply(opening)
  const done = toolResults(messages, 0, start)
  const now = toolResults(messages, start + 1, messages.length)
  const round = /\nRound: (\d+)\/(\d+)/.exec(opening)
  const label = round ? `Round ${round[1]}/${round[2]}` : 'This round'
  if (!done.some(isSourceRead)) return survey(now, label)
  const notes = done.find((result) => isNotesWrite(result) && result.ok)
  const verified = notes && done.some((result) => isNotesRead(result) && result.ok && result.index > notes.index)
  if (!verified) return writeNotes(done, now, label)
  return finish(now, label)
}

function survey(now, label) {
  const listing = now.find((result) => result.name === 'list_dir')
  if (!listing) return { text: `${label}: first I look at what is in the workspace.`, toolCalls: [call('list_dir', { depth: 3 })] }
  const reads = now.filter(isSourceRead)
  if (!reads.length) {
    const files = listedFiles(listing.content)
    if (!files.length) return { text: `${label}: the workspace has no files to summarise yet.` }
    return { text: `Reading the ${files.length} files.`, toolCalls: files.map((path) => call('read_file', { path })) }
  }
  const names = reads.filter((read) => read.ok).map((read) => read.args.path)
  return { text: `${label}: I listed the workspace and read ${names.length} files (${names.join(', ')}). Next round: write ${NOTES} with a summary of each and check it.` }
}

function writeNotes(done, now, label) {
  const write = now.find(isNotesWrite)
  if (!write) return { text: `${label}: writing ${NOTES} from the files I read.`, toolCalls: [call('write_file', { path: NOTES, content: notesText(done) })] }
  if (!write.ok) return { text: `${label}: writing ${NOTES} failed (${write.content}). I will try again next round.` }
  const check = now.find(isNotesRead)
  if (!check) return { text: 'Reading it back to verify.', toolCalls: [call('read_file', { path: NOTES })] }
  const entries = stripLineNumbers(check.content).split('\n').filter((line) => line.startsWith('- ')).length
  return { text: `${label}: wrote ${NOTES} and read it back: it has ${entries} entries, one per file. Next round: confirm and complete the goal.` }
}

function finish(now, label) {
  const reads = now.filter((result) => result.name === 'get_goal')
  const updates = now.filter((result) => result.name === 'update_goal')
  const last = updates.at(-1)
  if (last?.ok) return { text: `Done. ${NOTES} summarises every file of the workspace, and reading it back confirmed its content. The goal is complete.` }
  const latest = reads.at(-1)
  if (!latest || (last && latest.index < last.index)) {
    if (reads.length >= 3) return { text: `${label}: I could not complete the goal: ${last?.content ?? 'get_goal failed'}` }
    return { text: `${label}: ${NOTES} is written and verified. Reading the goal to complete it.`, toolCalls: [call('get_goal', {})] }
  }
  const goal = parse(latest.content)?.goal
  if (!goal?.goal_id) return { text: `${label}: there is no goal to complete (get_goal said: ${latest.content}).` }
  return {
    text: `Completing goal ${goal.goal_id} at revision ${goal.revision}.`,
    toolCalls: [call('update_goal', { goal_id: goal.goal_id, revision: goal.revision, action: 'complete' })],
  }
}

function humanReply(text) {
  const quoted = text.replace(/\s+/g, ' ').trim().slice(0, 80)
  return {
    text: `This is the offline demo model of goalkeeper (the scripted provider); it only knows the demo goal `
      + `("${DEMO_OBJECTIVE}") and does not answer prompts. You said: "${quoted}". `
      + `To work on it, ${REAL_MODEL}; or run the demo with npm start.`,
  }
}

/** Markdown with one entry per file read in earlier rounds: its first descriptive line and its size. */
function notesText(done) {
  const latest = new Map()
  for (const read of done.filter(isSourceRead)) if (read.ok) latest.set(read.args.path, read.content)
  const lines = ['# Notes', '', 'A summary of every file in this workspace (hidden entries skipped).', '']
  for (const [path, content] of [...latest].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const text = stripLineNumbers(content).split('\n')
    lines.push(`- \`${path}\` (${text.length} ${text.length === 1 ? 'line' : 'lines'}): ${describe(text)}`)
  }
  return `${lines.join('\n')}\n`
}

function describe(lines) {
  for (const line of lines) {
    const bare = line.replace(/^\s*(\/\/+|#+|\*+|-)\s*/, '').trim()
    if (bare.split(/\s+/).length >= 3) return bare
  }
  return lines.find((line) => line.trim())?.trim() ?? '(empty)'
}

// The conversation, as the request shows it.

/**
 * Index of the user message that opened the current turn: a goal round prompt, or a message that does not
 * follow a tool result (steered messages do; so does a message after a turn cancelled mid-tools, a case the
 * demo reads as part of the turn before).
 */
function turnStart(messages) {
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index].role !== 'user') continue
    if (textOf(messages[index]).startsWith('<goal_round>') || messages[index - 1]?.role !== 'tool') return index
  }
  return -1
}

/** Tool results in messages[from, to), each with its call's name and parsed arguments. */
function toolResults(messages, from, to) {
  const calls = new Map()
  for (const message of messages) {
    if (message.role === 'assistant') for (const item of message.toolCalls ?? []) calls.set(item.id, item)
  }
  const results = []
  for (let index = from; index < to; index++) {
    const message = messages[index]
    if (message.role !== 'tool') continue
    const made = calls.get(message.callId)
    results.push({ index, name: message.name, ok: message.ok, content: message.content, args: parse(made?.arguments) ?? {} })
  }
  return results
}

function textOf(message) {
  return (message.content ?? []).map((block) => block.text ?? '').join('\n')
}

/** Paths of the files in a list_dir listing, skipping directories, links and hidden entries. */
function listedFiles(listing) {
  return listing.split('\n')
    .filter((line) => line && !line.startsWith('[') && !line.startsWith('(') && !/[/@]$/.test(line) && !line.includes(' '))
    .filter((line) => !line.split('/').some((part) => part.startsWith('.')) && line !== NOTES)
}

const isSourceRead = (result) => result.name === 'read_file' && result.args.path !== NOTES
const isNotesWrite = (result) => result.name === 'write_file' && result.args.path === NOTES
const isNotesRead = (result) => result.name === 'read_file' && result.args.path === NOTES

const stripLineNumbers = (content) => content.split('\n').filter((line) => !/^\[.*\]$/.test(line)).map((line) => line.replace(/^\s*\d+\t/, '')).join('\n')

function call(name, args) {
  return { name, arguments: args }
}

function parse(text) {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
