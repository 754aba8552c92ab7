import type { Agent } from '@goalkeeper/agent-loop'
import type { UserMessage } from '@goalkeeper/session'

/** Sends a human prompt (or one with `source`) and waits until the agent has finished everything it triggered. */
export async function prompt(agent: Agent, text: string, source?: UserMessage['source']): Promise<void> {
  agent.send({ content: text, ...(source ? { source } : {}) })
  await agent.whenIdle()
}

/** A promise with its resolver, for awaiting an event a listener reports. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

/**
 * A model step that hangs until the turn is cancelled, and the moment the model is called with it: a goal
 * round's turn flushes its start before its first model call, so `agent/turn-start` comes before the call.
 */
export function hangingCall() {
  const { promise: reached, resolve } = deferred()
  return { step: () => (resolve(), { kind: 'hang' as const }), reached }
}

/** Polls `check` until it holds: only for what no event reports (a lease expiring, a signalled process dying). */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
