import type { NotifyEventType } from './events.ts'

/** Session record of one delivery attempt of a webhook (never the secret, the headers or a URL's query). */
export const NOTIFY_DELIVERY_RECORD = 'notify/delivery'

/**
 * How an attempt ended for the event: `delivered` (2xx), `retry` (it will be tried again), `failed` (given
 * up: a 4xx, or the last retry), `abandoned` (the plugin unloaded before it could be delivered).
 */
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed' | 'abandoned'

export interface DeliveryRecord {
  /** The event's `webhook-id`: the same in every attempt of one event. */
  id: string
  type: NotifyEventType
  /** Scheme, host and path only. */
  url: string
  /** 1 for the first try. */
  attempt: number
  /** The HTTP status, or null when no response came (timeout, network error, unload). */
  status: number | null
  /** Why the attempt failed without a status, or what made it give up. */
  error?: string
  durationMs: number
  outcome: DeliveryOutcome
}

/** Record types this package writes, by type name. */
export interface NotifierRecordData {
  /** One delivery attempt of a webhook event (never the secret, headers or a URL's query). */
  'notify/delivery': DeliveryRecord
}

export const NOTIFIER_RECORD_TYPES = [NOTIFY_DELIVERY_RECORD] as const

declare module '@goalkeeper/session' {
  interface RecordData extends NotifierRecordData {}
}
