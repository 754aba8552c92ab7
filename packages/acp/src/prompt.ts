import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { RequestError, type ContentBlock as AcpContentBlock, type StopReason } from '@agentclientprotocol/sdk'
import type { TextBlock, TurnOutcome } from '@goalkeeper/session'
import { ErrorCodes, invalidParams } from './errors.ts'

/** A file a client refers to, as the workspace tools name it: relative to the workspace when inside it. */
function fileName(uri: string, cwd: string): string {
  if (!uri.startsWith('file:')) return uri
  try {
    const file = fileURLToPath(uri)
    const relative = path.relative(cwd, file)
    return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file
  } catch {
    return uri
  }
}

/**
 * An ACP prompt as the text blocks a goalkeeper message holds. Text passes as it is; a link to a file
 * becomes a mention the model can read with its tools; embedded text (the editor's selection or an open
 * buffer) is included with where it came from. Images, audio and binary resources are refused by name:
 * `initialize` does not offer them.
 */
export function promptContent(blocks: readonly AcpContentBlock[], cwd: string): TextBlock[] {
  const out: TextBlock[] = []
  blocks.forEach((block, index) => {
    switch (block.type) {
      case 'text':
        out.push({ type: 'text', text: block.text })
        return
      case 'resource_link':
        out.push({ type: 'text', text: `[${block.title ?? block.name}](${fileName(block.uri, cwd)})` })
        return
      case 'resource': {
        const resource = block.resource
        if (!('text' in resource) || typeof resource.text !== 'string') {
          throw invalidParams(`prompt[${index}]: embedded binary resources are not supported (only text)`, { index, uri: resource.uri })
        }
        out.push({ type: 'text', text: `<context source=${JSON.stringify(fileName(resource.uri, cwd))}>\n${resource.text}\n</context>` })
        return
      }
      default:
        throw invalidParams(`prompt[${index}]: ${block.type} content is not supported (promptCapabilities offers text, resource_link and embedded text resources)`, { index, type: block.type })
    }
  })
  if (!out.some((block) => block.text.trim())) throw invalidParams('prompt: the prompt is empty')
  return out
}

/** The text of a prompt that is one `/command`, or undefined. */
export function commandText(blocks: readonly TextBlock[]): string | undefined {
  if (blocks.length !== 1) return undefined
  const line = blocks[0].text.trim()
  return line.startsWith('/') ? line : undefined
}

/**
 * How a turn's outcome answers `session/prompt`: a stop reason, or a JSON-RPC error for a turn that failed
 * (a model or provider error has no stop reason in ACP).
 */
export function stopReasonOf(outcome: TurnOutcome | undefined): StopReason | RequestError {
  if (!outcome) return 'end_turn'
  switch (outcome.kind) {
    case 'completed':
    // A goal round that yielded to a prompt: nothing failed, and the prompt's own turn follows.
    case 'preempted': return 'end_turn'
    case 'max-tokens': return 'max_tokens'
    case 'aborted':
    case 'disposed':
    case 'interrupted': return 'cancelled'
    case 'error':
      if (outcome.code === 'MAX_STEPS') return 'max_turn_requests'
      if (outcome.code === 'REFUSED') return 'refusal'
      return new RequestError(ErrorCodes.INTERNAL, `the turn failed: ${outcome.code}: ${outcome.message}`, { code: outcome.code })
    default:
      // Consumers must tolerate outcome kinds added later.
      return 'end_turn'
  }
}
