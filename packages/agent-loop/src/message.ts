import { randomUUID } from 'node:crypto'
import type { ContentBlock, MessageSource, UserMessage } from '@goalkeeper/session'
import type { MessageInput } from './types.ts'
import { AgentLoopError } from './errors.ts'

export const HUMAN: MessageSource = Object.freeze({ kind: 'human' })
/** Source of a `steer()` that names none. */
export const STEER: MessageSource = Object.freeze({ kind: 'plugin', name: 'steer' })

/**
 * Validates and copies caller input into a `UserMessage`. The copy matters: the recorded message must not
 * change if the caller later mutates the object it passed in.
 */
export function toUserMessage(input: MessageInput, defaultSource: MessageSource): UserMessage {
  if (!input || typeof input !== 'object') {
    throw new AgentLoopError('INVALID_MESSAGE', 'a message must be an object with `content` (a string or text blocks)')
  }
  const id = input.id ?? randomUUID()
  if (typeof id !== 'string' || !id) throw new AgentLoopError('INVALID_MESSAGE', 'a message id must be a non-empty string')
  return { id, content: toContent(input.content), source: toSource(input.source ?? defaultSource) }
}

function toContent(content: unknown): ContentBlock[] {
  if (typeof content === 'string') {
    if (!content) throw new AgentLoopError('INVALID_MESSAGE', 'a message needs non-empty content')
    return [{ type: 'text', text: content }]
  }
  if (!Array.isArray(content) || !content.length) {
    throw new AgentLoopError('INVALID_MESSAGE', 'message content must be a non-empty string or a non-empty array of text blocks')
  }
  return content.map((block, index) => {
    if (!block || block.type !== 'text' || typeof block.text !== 'string') {
      throw new AgentLoopError('INVALID_MESSAGE', `content block ${index} must be { type: 'text', text: string }`)
    }
    return { type: 'text', text: block.text }
  })
}

/**
 * Checked and copied although typed: `send` is where input from hosts and plugins enters the log, so a bad
 * source fails here with a clear error, and no field beyond the vocabulary's is recorded.
 */
function toSource(source: MessageSource): MessageSource {
  switch (source.kind) {
    case 'human': return { kind: 'human' }
    case 'plugin':
      if (typeof source.name === 'string' && source.name) return { kind: 'plugin', name: source.name }
      break
    case 'goal':
      if (typeof source.goalId === 'string' && Number.isInteger(source.revision) && Number.isInteger(source.round)) {
        return { kind: 'goal', goalId: source.goalId, revision: source.revision, round: source.round }
      }
      break
  }
  throw new AgentLoopError('INVALID_MESSAGE', `invalid message source ${JSON.stringify(source)}: expected human, plugin { name } or goal { goalId, revision, round }`)
}
