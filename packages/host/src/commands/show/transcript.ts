import type { Goal, GoalChange } from '@goalkeeper/goal'
import type { CoreRecordData, SessionRecord, TurnOutcome, UserMessage } from '@goalkeeper/session'
import { describeGoalChange } from '../render/goal-text.ts'
import { excerpt, oneLine, shortArguments } from '../render/text.ts'

export interface TranscriptOptions {
  /** Show tool results and goal prompts whole instead of shortened. */
  full: boolean
}

const pad = (value: number) => String(value).padStart(2, '0')
const clock = (ms: number) => {
  const date = new Date(ms)
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}

const textOf = (message: UserMessage | undefined) =>
  (message?.content ?? []).map((block) => (block as { text?: string }).text ?? '').join('\n')

const indent = (text: string, prefix: string) => text.split('\n').map((line) => (prefix + line).trimEnd()).join('\n')

/** A session log as a readable transcript: turns, messages (goal rounds marked), tools, goal changes, outcomes. */
export function renderTranscript(records: readonly SessionRecord[], options: TranscriptOptions): string[] {
  const lines: string[] = []
  const queued = new Map<string, UserMessage>()
  const settled = new Set<string>()
  for (const record of records) {
    const data = record.data as any
    switch (record.type) {
      case 'session/header': {
        const head = data as CoreRecordData['session/header']
        const parent = head.parent ? `, forked from ${head.parent.id} at seq ${head.parent.seq}` : ''
        lines.push(`session ${head.id}, started ${new Date(head.createdAt).toISOString()} in ${head.cwd}${parent}`)
        break
      }
      case 'input/queued':
        queued.set(data.message.id, data.message)
        break
      case 'input/cancelled':
      case 'input/rejected': {
        settled.add(data.messageId)
        const what = record.type === 'input/cancelled' ? 'cancelled' : 'rejected'
        lines.push(`  input ${what} (${data.reason}): ${describeMessage(queued.get(data.messageId), { full: false }) || data.messageId}`)
        break
      }
      case 'turn/start':
        lines.push('', `turn ${data.turn}  ${clock(record.at)}`)
        break
      case 'user/message':
        settled.add(data.id)
        lines.push(indent(describeMessage(data, options), '  '))
        break
      case 'assistant/message':
        if (data.text?.trim()) lines.push(indent(`assistant: ${data.text.trim()}`, '  '))
        break
      case 'tool/call':
        lines.push(`  tool ${data.name} ${options.full ? data.arguments : shortArguments(data.arguments, 120)}`)
        break
      case 'tool/result': {
        const body = options.full ? data.content ?? '' : excerpt(data.content ?? '', 6, 400)
        const [first, ...rest] = (data.ok ? body : `${data.error?.code ?? 'FAILED'}: ${body}`).split('\n')
        lines.push(`    ${data.ok ? '->' : '!!'} ${first}`.trimEnd(), ...rest.map((line: string) => `       ${line}`.trimEnd()))
        break
      }
      case 'turn/end':
        lines.push(`  turn ${data.turn} ${describeOutcome(data.outcome)}`)
        break
      case 'goal/change':
        lines.push(`  ${describeGoalChange({ op: data.op, seq: record.seq, goal: (data.goal ?? undefined) as Goal | undefined, previous: undefined } as GoalChange)}`)
        break
      case 'step/start':
      case 'step/end':
        break
      default:
        lines.push(`  [${record.type}] ${oneLine(JSON.stringify(record.data) ?? '', 160)}`)
    }
  }
  const waiting = [...queued.values()].filter((message) => !settled.has(message.id))
  if (waiting.length) lines.push('', 'waiting in the inbox (runs on resume):', ...waiting.map((message) => `  ${describeMessage(message, { full: false })}`))
  return lines
}

/** A user message with its source: goal rounds show their round and, shortened, only the objective. */
function describeMessage(message: UserMessage | undefined, options: TranscriptOptions): string {
  if (!message) return ''
  const text = textOf(message).trim()
  const source = message.source
  if (source?.kind === 'goal') {
    if (options.full) return `goal round ${source.round}:\n${text}`
    const objective = /^Objective: (.*)$/m.exec(text)?.[1]
    return `goal round ${source.round}${objective ? ` (objective ${oneLine(objective, 100)})` : ''}`
  }
  if (source?.kind === 'plugin') return `[${source.name}] ${options.full ? text : oneLine(text, 200)}`
  return `user: ${text}`
}

function describeOutcome(outcome: TurnOutcome | undefined): string {
  switch (outcome?.kind) {
    case 'completed': return 'completed'
    case 'aborted': return `cancelled (${outcome.cause})`
    case 'error': return `failed: ${outcome.code}: ${outcome.message}`
    case 'max-tokens': return 'stopped at the output token limit'
    case 'disposed': return 'ended by shutdown'
    case 'interrupted': return 'interrupted (the process stopped; repaired on the next open)'
    default: return `ended: ${(outcome as { kind?: string } | undefined)?.kind ?? 'unknown'}`
  }
}
