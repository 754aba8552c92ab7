/** An error thrown by the agent service for bad input or a bad state; `code` is stable for callers to test. */
export class AgentLoopError extends Error {
  constructor(public code: AgentLoopErrorCode, message: string) {
    super(message)
    this.name = 'AgentLoopError'
  }
}

export type AgentLoopErrorCode =
  | 'INVALID_MESSAGE'
  | 'DUPLICATE_MESSAGE_ID'
  | 'INVALID_CANCEL_REASON'
  | 'INVALID_OPTIONS'
  | 'AGENT_DISPOSED'
  | 'AGENT_EXISTS'
  | 'NO_MODEL'
  | 'SESSION_NOT_WRITABLE'
  | 'SERVICE_CLOSING'
  /** The reason of a turn's abort signal. */
  | 'ABORTED'
