import type { Context } from 'cordis'
import type {} from '@goalkeeper/fleet'
import type {} from '@goalkeeper/goal'
import type {} from '@goalkeeper/permissions'
import { Config, type NotifierConfig } from './config.ts'
import { approvalEvent, goalEvent, jobLostEvent } from './events.ts'
import { Notifier, type NotifierService } from './notifier.ts'

export { Config, Endpoint, type EndpointConfig, type NotifierConfig } from './config.ts'
export { NOTIFY_EVENTS, approvalEvent, goalEvent, jobLostEvent, type NotifyEvent, type NotifyEventType } from './events.ts'
export { type EndpointInput, type NotifierService } from './notifier.ts'
export { NOTIFIER_RECORD_TYPES, NOTIFY_DELIVERY_RECORD, type DeliveryOutcome, type DeliveryRecord, type NotifierRecordData } from './records.ts'
export { nextWait, retryAfterMs, retryable } from './backoff.ts'
export { newMessageId, sign, signingKey } from './signature.ts'
export { loggedUrl, urlProblem } from './url.ts'

declare module 'cordis' {
  interface Context {
    notifier: NotifierService
  }
}

export const name = 'notifier'
// Only events: goals, permissions and the fleet are listened to when they are loaded, never required.
export const inject: string[] = []

export const apply = (ctx: Context, config: NotifierConfig) => {
  const notifier = new Notifier(ctx, config)
  // A bad endpoint fails the load here, named by the loader, before anything is listened to.
  const opened: (() => void)[] = []
  try {
    for (const endpoint of config.endpoints) opened.push(notifier.add(endpoint))
  } catch (error) {
    for (const close of opened) close()
    throw error
  }
  ctx.effect(function* () {
    yield ctx.on('goal/changed', (agent, change) => {
      const event = goalEvent(agent, change)
      if (event) notifier.publish(event, agent.session)
    })
    yield ctx.on('permissions/waiting', (request) => notifier.publish(approvalEvent(request), request.review.call.agent.session))
    // The session belongs to whoever took the job over: the delivery log of this one goes to the log only.
    yield ctx.on('fleet/job-lost', (lost) => notifier.publish(jobLostEvent(lost)))
    yield ctx.provide('notifier', notifier.service)
    // First on unload: the listeners stay until the deliveries under way are done or abandoned.
    yield () => notifier.close()
  }, 'notifier')
}
