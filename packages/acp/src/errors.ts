import { RequestError } from '@agentclientprotocol/sdk'
import { describeError } from '@goalkeeper/kit'

/** JSON-RPC codes used beyond the SDK's helpers. */
export const ErrorCodes = {
  INVALID_PARAMS: -32602,
  INTERNAL: -32603,
  RESOURCE_NOT_FOUND: -32002,
} as const

export const invalidParams = (message: string, data?: unknown) => new RequestError(ErrorCodes.INVALID_PARAMS, message, data)

export const sessionNotFound = (sessionId: string) =>
  new RequestError(ErrorCodes.RESOURCE_NOT_FOUND, `no session "${sessionId}" on this connection (create one with session/new or open it with session/load)`, { sessionId })

const codeOf = (error: unknown) => (typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : undefined)

/** Any thrown value as a JSON-RPC error whose message names the problem; goalkeeper's own codes go in `data.code`. */
export function toRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error
  const code = codeOf(error)
  const message = describeError(error)
  const data = code ? { code } : undefined
  switch (code) {
    case 'SESSION_TAMPERED':
    case 'SESSION_TRUNCATED':
    case 'SESSION_UNSIGNED':
      // A log changed by someone else: the client is told what its signatures say, as show would.
      return new RequestError(ErrorCodes.INVALID_PARAMS, message, { code, integrity: integrityOf(code, error as { line?: number }, message) })
    case 'SESSION_NOT_FOUND':
      return new RequestError(ErrorCodes.RESOURCE_NOT_FOUND, message, data)
    case 'INVALID_MESSAGE':
    case 'INVALID_OPTIONS':
    case 'SESSION_BAD_SEQ':
      return new RequestError(ErrorCodes.INVALID_PARAMS, message, data)
    default:
      return new RequestError(ErrorCodes.INTERNAL, message, data)
  }
}

/** The integrity a refused load reports, shaped like `Session.integrity`. */
function integrityOf(code: string, error: { line?: number }, reason: string) {
  if (code === 'SESSION_TAMPERED') return { state: 'tampered', line: error.line, reason }
  if (code === 'SESSION_TRUNCATED') return { state: 'truncated', ...(error.line !== undefined && { lastSeq: error.line - 2 }), reason }
  return { state: 'unsigned', reason }
}
