import type { PermissionAnswer, PermissionRequest } from '@goalkeeper/permissions'
import { oneLine } from '../render/text.ts'

/** `by` of the answers given here. */
export const TERMINAL = 'terminal'
export const QUESTION_PROMPT = 'allow? [y]es once, [a]lways in this session, [n]o > '

/** The word a person typed, as an answer; undefined asks again. An empty line is no: nothing runs by accident. */
export function parseAnswer(line: string): PermissionAnswer | undefined {
  const word = line.trim().toLowerCase()
  if (word === 'y' || word === 'yes') return { kind: 'allow', scope: 'once', by: TERMINAL }
  if (word === 'a' || word === 'always') return { kind: 'allow', scope: 'session', by: TERMINAL }
  if (word === '' || word === 'n' || word === 'no') return { kind: 'deny', by: TERMINAL, reason: 'the person at the terminal said no' }
  return undefined
}

/** What the person reads before answering: why, and the command as it will run (or the arguments). */
export function describeRequest(request: PermissionRequest): string[] {
  const shown = request.command !== undefined
    ? `$ ${request.command}`
    : `${request.tool} ${oneLine(JSON.stringify(request.arguments), 300)}`
  return [`permission needed: ${request.why}`, `  ${shown}`]
}

interface Pending {
  request: PermissionRequest
  resolve: (answer: PermissionAnswer) => void
}

/**
 * Permission questions in chat, one at a time: the next line typed answers the question on screen
 * instead of going to the agent. A turn cancelled meanwhile drops its question.
 */
export class PermissionQuestions {
  private queue: Pending[] = []

  constructor(private show: (lines: string[], prompt: string) => void, private restore: () => void) {}

  get asking(): boolean {
    return this.queue.length > 0
  }

  ask(request: PermissionRequest): Promise<PermissionAnswer> {
    return new Promise((resolve) => {
      const pending: Pending = { request, resolve }
      this.queue.push(pending)
      request.signal.addEventListener('abort', () => this.drop(pending, { kind: 'deny', by: TERMINAL, reason: 'the turn was cancelled' }), { once: true })
      if (this.queue.length === 1) this.present()
    })
  }

  /** A typed line: the answer to the question on screen, or false when there is none. */
  take(line: string): boolean {
    const current = this.queue[0]
    if (!current) return false
    const answer = parseAnswer(line)
    if (!answer) {
      this.show([`"${oneLine(line, 40)}" is not an answer: type y, a or n`], QUESTION_PROMPT)
      return true
    }
    this.drop(current, answer)
    return true
  }

  /** Ends every question unanswered (chat is leaving): no means no. */
  close(): void {
    for (const pending of [...this.queue]) this.drop(pending, { kind: 'deny', by: TERMINAL, reason: 'chat ended before the person answered' })
  }

  private drop(pending: Pending, answer: PermissionAnswer) {
    const index = this.queue.indexOf(pending)
    if (index < 0) return
    this.queue.splice(index, 1)
    pending.resolve(answer)
    if (index === 0) this.queue.length ? this.present() : this.restore()
  }

  private present() {
    this.show(describeRequest(this.queue[0]!.request), QUESTION_PROMPT)
  }
}
