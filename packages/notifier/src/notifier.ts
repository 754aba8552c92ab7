import type { Context, Logger } from 'cordis'
import { delay, describeError, holdSecret, liveMasker, maskDeep } from '@goalkeeper/kit'
import type { Session } from '@goalkeeper/session'
import { nextWait, retryable } from './backoff.ts'
import type { EndpointConfig, NotifierConfig } from './config.ts'
import type { NotifyEvent, NotifyEventType } from './events.ts'
import { post, type PostResult } from './post.ts'
import { NOTIFY_DELIVERY_RECORD, type DeliveryOutcome, type DeliveryRecord } from './records.ts'
import { newMessageId, sign, signingKey } from './signature.ts'
import { loggedUrl, urlProblem } from './url.ts'

/** An endpoint ready to send: its parsed URL and HMAC key (the secret itself is not kept). */
interface Endpoint {
  config: EndpointConfig
  url: URL
  shown: string
  key?: Buffer
  release: () => void
}

/** What a host may give `add` (the CLI's `--notify`): an endpoint, defaults filled in. */
export type EndpointInput = Pick<EndpointConfig, 'url'> & Partial<EndpointConfig>

/** `ctx.notifier`. */
export interface NotifierService {
  /**
   * Sends to one more endpoint until the returned function is called. Throws when the URL is not http(s)
   * or its `secretEnv` names a variable that is not set.
   */
  add(endpoint: EndpointInput): () => void
  /** The endpoints in force, as a person may see them (no secret, no query string). */
  endpoints(): { url: string; signed: boolean; events: readonly NotifyEventType[] }[]
  /** Resolves once nothing is queued or under way. */
  idle(): Promise<void>
}

/** Takes events, sends each to every endpoint that wants it in the background, and records every attempt. */
export class Notifier {
  private list: Endpoint[] = []
  private running = new Set<Promise<void>>()
  private stopping = new AbortController()
  private closed = false
  // The event body goes to another machine: a secret of this one (a key in an objective) stays here.
  private masker = liveMasker()
  private logger: Logger
  readonly service: NotifierService

  constructor(ctx: Context, private config: NotifierConfig) {
    this.logger = ctx.logger('notifier')
    this.service = {
      add: (endpoint) => this.add(endpoint),
      endpoints: () => this.list.map((entry) => ({ url: entry.shown, signed: !!entry.key, events: entry.config.events })),
      idle: () => this.idle(),
    }
  }

  /** Checks and opens one endpoint; throws what is wrong with it. */
  add(input: EndpointInput): () => void {
    const config: EndpointConfig = {
      url: input.url,
      ...(input.secretEnv && { secretEnv: input.secretEnv }),
      events: input.events ?? [],
      timeoutMs: input.timeoutMs ?? 10_000,
      retries: input.retries ?? 5,
    }
    const problem = urlProblem(config.url)
    if (problem) throw new Error(problem)
    let key: Buffer | undefined
    let release = () => {}
    if (config.secretEnv) {
      const secret = process.env[config.secretEnv]
      if (!secret) throw new Error(`${config.secretEnv} is not set: it must hold the signing secret of ${loggedUrl(config.url)}`)
      key = signingKey(secret)
      // Whatever its variable's name, the secret is masked in logs and session files from now on.
      release = holdSecret(secret)
    }
    const endpoint: Endpoint = { config, url: new URL(config.url), shown: loggedUrl(config.url), key, release }
    this.list.push(endpoint)
    return () => {
      const at = this.list.indexOf(endpoint)
      if (at < 0) return
      this.list.splice(at, 1)
      release()
    }
  }

  /** Queues `event` for every endpoint that wants it; `session` gets the delivery log. Never waits. */
  publish(event: NotifyEvent, session?: Session): void {
    const targets = this.list.filter((endpoint) => !endpoint.config.events.length || endpoint.config.events.includes(event.type))
    if (!targets.length) return
    if (this.closed) {
      this.logger.warn('%s not sent: the notifier is stopping', event.type)
      return
    }
    const id = newMessageId()
    const body = JSON.stringify({ type: event.type, timestamp: new Date().toISOString(), data: maskDeep(event.data, this.masker) })
    for (const endpoint of targets) {
      const delivery = this.deliver(endpoint, id, event.type, body, session).catch((error) => {
        this.logger.error('delivery of %s to %s failed: %s', id, endpoint.shown, describeError(error))
      })
      this.running.add(delivery)
      void delivery.finally(() => this.running.delete(delivery))
    }
  }

  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running])
  }

  /**
   * Stops taking events, lets deliveries under way finish for up to `drainMs`, then abandons the rest
   * (each recorded `abandoned`) and says so. Unload is bounded whatever the receivers do.
   */
  async close(): Promise<void> {
    this.closed = true
    if (this.running.size) {
      const window = new AbortController()
      const finished = this.idle().then(() => true)
      const inTime = await Promise.race([finished, delay(this.config.drainMs, { signal: window.signal }).then(() => false)])
      window.abort()
      if (!inTime) {
        this.logger.warn('gave up on %d webhook deliveries still under way after %d ms (drainMs)', this.running.size, this.config.drainMs)
        this.stopping.abort()
        await this.idle()
      }
    }
    for (const endpoint of this.list.splice(0)) endpoint.release()
  }

  private async deliver(endpoint: Endpoint, id: string, type: NotifyEventType, body: string, session: Session | undefined): Promise<void> {
    const { timeoutMs, retries } = endpoint.config
    const signal = this.stopping.signal
    for (let attempt = 1; ; attempt++) {
      const record = (outcome: DeliveryOutcome, status: number | null, durationMs: number, error?: string) =>
        this.record(session, { id, type, url: endpoint.shown, attempt, status, ...(error !== undefined && { error }), durationMs, outcome })
      if (signal.aborted) return record('abandoned', null, 0, 'the notifier stopped before this attempt')
      // Signed per attempt: the timestamp is when it was sent, so a receiver's replay window holds for retries.
      const timestamp = Math.floor(Date.now() / 1000)
      const headers: Record<string, string> = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'user-agent': 'goalkeeper-notifier' }
      if (endpoint.key) headers['webhook-signature'] = sign(endpoint.key, id, timestamp, body)
      const started = performance.now()
      const result = await post(endpoint.url, headers, body, timeoutMs, signal)
      const durationMs = Math.round(performance.now() - started)
      const status = result.kind === 'response' ? result.status : null
      if (result.kind === 'response' && result.status >= 200 && result.status < 300) return record('delivered', status, durationMs)
      if (result.kind === 'aborted') return record('abandoned', null, durationMs, 'the notifier stopped during the attempt')
      const why = failure(result, timeoutMs)
      if (!retryable(result) || attempt > retries) {
        this.logger.warn('%s to %s failed after %d attempt%s: %s', type, endpoint.shown, attempt, attempt === 1 ? '' : 's', why)
        return record('failed', status, durationMs, why)
      }
      const next = nextWait(result, attempt, this.config)
      if ('giveUp' in next) {
        this.logger.warn('%s to %s failed: %s', type, endpoint.shown, next.giveUp)
        return record('failed', status, durationMs, `${why}; ${next.giveUp}`)
      }
      record('retry', status, durationMs, why)
      if (!(await delay(next.waitMs, { signal }))) {
        attempt++
        return record('abandoned', null, 0, 'the notifier stopped while waiting to retry')
      }
    }
  }

  /** One line of the delivery log in the session it is about; a closed or full session only loses it. */
  private record(session: Session | undefined, data: DeliveryRecord): void {
    this.logger.debug('%s %s to %s: attempt %d, %s', data.outcome, data.type, data.url, data.attempt, data.status ?? data.error)
    if (!session || session.closed || session.readOnly) return
    try {
      session.append(NOTIFY_DELIVERY_RECORD, data)
    } catch (error) {
      this.logger.warn('could not record a webhook delivery: %s', describeError(error))
    }
  }
}

function failure(result: PostResult, timeoutMs: number): string {
  switch (result.kind) {
    case 'response': return `HTTP ${result.status}`
    case 'timeout': return `no response within ${timeoutMs} ms`
    case 'network': return result.message
    case 'aborted': return 'stopped'
  }
}
