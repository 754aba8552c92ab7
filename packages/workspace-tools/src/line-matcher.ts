import { Worker } from 'node:worker_threads'
import { WorkspaceError } from './errors.ts'

/** Plain JavaScript, evaluated in the worker (no loader needed): returns the matching lines of one text. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const regexp = new RegExp(workerData.source, workerData.flags)
parentPort.on('message', ({ text, limit }) => {
  const lines = text.split(/\\r?\\n/)
  const hits = []
  for (let i = 0; i < lines.length && hits.length < limit; i++) if (regexp.test(lines[i])) hits.push([i + 1, lines[i]])
  parentPort.postMessage(hits)
})
`

export type Hit = [line: number, text: string]

/**
 * Tests a model-chosen regular expression on a worker thread. A pattern like `(a+)+$` can backtrack
 * for minutes on one short line, and on the main thread that would freeze every agent of the
 * process; here it costs at most the deadline, after which the worker is terminated.
 *
 * The deadline counts the time the expression runs, from the moment the thread is online: starting a
 * thread takes from a few to several hundred milliseconds on a busy machine, and that must not turn an
 * ordinary pattern into a SEARCH_TIMEOUT.
 */
export class LineMatcher {
  private started?: { worker: Worker; online: Promise<void> }
  /** Milliseconds the expression has run so far, over every text of this search. */
  private spent = 0

  constructor(private source: string, private flags: string, private timeoutMs: number, private signal: AbortSignal) {}

  /** Started at the first text to match: a search that finds no file to read costs no thread. */
  private get thread() {
    if (!this.started) {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { source: this.source, flags: this.flags } })
      this.started = { worker, online: new Promise((resolve) => worker.once('online', () => resolve())) }
    }
    return this.started
  }

  /** The first `limit` matching lines of `text`, numbered from 1. */
  match(text: string, limit: number): Promise<Hit[]> {
    const { worker, online } = this.thread
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      let since: number | undefined
      const settle = (done: () => void) => {
        clearTimeout(timer)
        if (since !== undefined) this.spent += Date.now() - since
        this.signal.removeEventListener('abort', onAbort)
        worker.off('message', onMessage)
        worker.off('error', onError)
        done()
      }
      const onMessage = (hits: Hit[]) => settle(() => resolve(hits))
      const onError = (error: Error) => settle(() => reject(error))
      const onAbort = () => settle(() => reject(new WorkspaceError('ABORTED', 'The tool call was aborted.')))
      const onTimeout = () => settle(() => reject(new WorkspaceError('SEARCH_TIMEOUT',
        `The pattern did not finish within ${this.timeoutMs} ms; it most likely backtracks catastrophically (nested `
        + 'quantifiers such as (a+)+ or (.*)*). Simplify it, or narrow the search with path or glob.')))
      if (this.signal.aborted) return onAbort()
      this.signal.addEventListener('abort', onAbort, { once: true })
      worker.on('message', onMessage)
      worker.on('error', onError)
      void online.then(() => {
        if (!pending()) return
        since = Date.now()
        timer = setTimeout(onTimeout, Math.max(0, this.timeoutMs - this.spent))
        worker.postMessage({ text, limit })
      })
      // settle() removes the listeners: an aborted or failed match posts nothing once the thread is online.
      function pending() {
        return worker.listeners('message').includes(onMessage)
      }
    })
  }

  /** Ends the worker, also while it is stuck in a match. */
  async close(): Promise<void> {
    await this.started?.worker.terminate()
  }
}
