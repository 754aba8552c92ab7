import Schema from 'schemastery'
import { NOTIFY_EVENTS, type NotifyEventType } from './events.ts'

export interface EndpointConfig {
  url: string
  /** The environment variable holding the signing secret (`whsec_<base64>` or raw); unsigned without it. */
  secretEnv?: string
  /** The event types this endpoint gets; empty: all of them. */
  events: NotifyEventType[]
  timeoutMs: number
  retries: number
}

export interface NotifierConfig {
  endpoints: EndpointConfig[]
  backoffMs: number
  maxBackoffMs: number
  drainMs: number
}

export const Endpoint = Schema.object({
  url: Schema.string().required().description('Where events are POSTed (http or https).'),
  secretEnv: Schema.string()
    .description('Name of the environment variable that holds the signing secret (e.g. GOALKEEPER_WEBHOOK_SECRET); never the secret itself.'),
  events: Schema.array(Schema.union(NOTIFY_EVENTS.map((type) => Schema.const(type)))).default([])
    .description(`Event types to send (${NOTIFY_EVENTS.join(', ')}); empty: all.`),
  timeoutMs: Schema.natural().min(1).default(10_000).description('One attempt gives up after this many ms.'),
  retries: Schema.natural().max(20).default(5).description('Attempts after the first, on 5xx, 429, timeouts and network errors.'),
})

export const Config = Schema.object({
  endpoints: Schema.array(Endpoint).default([]).description('Webhook receivers.'),
  backoffMs: Schema.natural().min(1).default(1000).description('Wait before the first retry; doubled for each later one (with jitter).'),
  maxBackoffMs: Schema.natural().min(1).default(60_000).description('Longest wait between attempts; a Retry-After beyond it gives up.'),
  drainMs: Schema.natural().default(5000).description('On unload, how long deliveries still under way may take before they are abandoned.'),
})
