import type { PermissionAnswer, PermissionRequest } from '@goalkeeper/permissions'
import { ControlError, type ControlSource, type PendingApproval } from './protocol.ts'

interface Waiting {
  agent: string
  view: PendingApproval
  settle(answer: PermissionAnswer): void
}

const ARGUMENTS_CHARS = 2000

/**
 * The permission questions this process took for controllers: each waits until a controller answers it or
 * its turn is cancelled (the call is then denied by the permissions plugin, as for any dropped question).
 */
export class Approvals {
  private waiting = new Map<string, Waiting>()

  take(request: PermissionRequest): Promise<PermissionAnswer> {
    const { call } = request.review
    const text = JSON.stringify(request.arguments)
    const view: PendingApproval = {
      callId: call.callId,
      tool: request.tool,
      why: request.why,
      ...(request.command !== undefined ? { command: request.command } : {}),
      arguments: text.length > ARGUMENTS_CHARS ? `${text.slice(0, ARGUMENTS_CHARS)}…` : text,
      since: Date.now(),
    }
    return new Promise<PermissionAnswer>((resolve, reject) => {
      const done = () => {
        this.waiting.delete(call.callId)
        request.signal.removeEventListener('abort', cancelled)
      }
      const cancelled = () => {
        done()
        reject(new Error('the turn was cancelled before anyone answered'))
      }
      if (request.signal.aborted) return cancelled()
      request.signal.addEventListener('abort', cancelled, { once: true })
      this.waiting.set(call.callId, { agent: call.agent.id, view, settle: (answer) => (done(), resolve(answer)) })
    })
  }

  of(agent: string): PendingApproval[] {
    return [...this.waiting.values()].filter((entry) => entry.agent === agent).map((entry) => entry.view)
  }

  answer(agent: string, callId: string, allow: boolean, source: ControlSource): void {
    const entry = this.waiting.get(callId)
    if (!entry || entry.agent !== agent) throw new ControlError('CONTROL_NO_APPROVAL', `no call ${callId} waits for an answer in this session (answered already, or its turn ended)`)
    entry.settle(allow ? { kind: 'allow', scope: 'once', by: source } : { kind: 'deny', by: source, reason: `${entry.view.why}, and the person (${source}) said no` })
  }

  /** The plugin stops: every open question is dropped, so no call waits on a controller that is gone. */
  dropAll(): void {
    for (const entry of [...this.waiting.values()]) entry.settle({ kind: 'deny', by: 'control', reason: 'nobody can answer any more: the control plugin stopped' })
  }
}
