import { type ControlClientOptions, ControlError, type ControlReply, type ControlRequest, type ControlStatus, parseRequest, sendControl } from '@goalkeeper/control'
import { isRecord } from '@goalkeeper/kit'

/** What a goal page may do: the owning process's status, or why nothing can be done from here. */
export type ControlState = { live: true; status: ControlStatus } | { live: false; why: string }

/** The page's controls. `send` stands for the control channel (tests of the board alone give their own). */
export interface BoardControls {
  send(request: ControlRequest): Promise<ControlReply>
}

export const controlsOf = (options: ControlClientOptions = {}): BoardControls => ({ send: (request) => sendControl(request, options) })

/** The owning process's status for a goal page; a process that is gone or unknown is said so, never thrown. */
export async function controlState(controls: BoardControls, session: string): Promise<ControlState> {
  try {
    const reply = await controls.send({ session, source: 'board', action: 'status' })
    return reply.ok ? { live: true, status: reply.status } : { live: false, why: reply.message }
  } catch (error) {
    return { live: false, why: error instanceof Error ? error.message : String(error) }
  }
}

export interface ControlOutcome {
  status: number
  body: { ok: true; status: ControlStatus } | { ok: false; code: string; message: string }
}

/**
 * One control from the page: the body names the action and its values; the session comes from the path and
 * the source is always `board`, whatever the body says, so the page cannot speak for another front end.
 */
export async function postControl(controls: BoardControls, session: string, body: unknown): Promise<ControlOutcome> {
  let request: ControlRequest
  try {
    if (!isRecord(body)) throw new ControlError('CONTROL_BAD_REQUEST', 'a control is a JSON object with an action')
    request = parseRequest({ ...body, session, source: 'board' })
  } catch (error) {
    return { status: 400, body: { ok: false, code: 'CONTROL_BAD_REQUEST', message: (error as Error).message } }
  }
  try {
    const reply = await controls.send(request)
    return { status: reply.ok ? 200 : 409, body: reply }
  } catch (error) {
    const code = error instanceof ControlError ? error.code : 'CONTROL_FAILED'
    return { status: 503, body: { ok: false, code, message: (error as Error).message } }
  }
}
