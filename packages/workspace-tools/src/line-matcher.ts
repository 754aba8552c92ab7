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
 */
export class LineMatcher {
  private started?: Worker
  private deadline: number

  constructor(private source: string, private flags: string, private timeoutMs: number, private signal: AbortSignal) {
    this.deadline = Date.now() + timeoutMs
  }

  /** Started at the first text to match: a search that finds no file to read costs no thread. */
  private get worker(): Worker {
    return (this.started ??= new Worker(WORKER_SOURCE, { eval: true, workerData: { source: this.source, flags: this.flags } }))
  }

  /** The first `limit` matching lines of `text`, numbered from 1. */
  match(text: string, limit: number): Promise<Hit[]> {
    return new Promise((resolve, reject) => {
      const settle = (done: () => void) => {
        clearTimeout(timer)
        this.signal.removeEventListener('abort', onAbort)
        this.started?.off('message', onMessage)
        this.started?.off('error', onError)
        done()
      }
      const onMessage = (hits: Hit[]) => settle(() => resolve(hits))
      const onError = (error: Error) => settle(() => reject(error))
      const onAbort = () => settle(() => reject(new WorkspaceError('ABORTED', 'The tool call was aborted.')))
      const timer = setTimeout(() => settle(() => reject(new WorkspaceError('SEARCH_TIMEOUT',
        `The pattern did not finish within ${this.timeoutMs} ms; it most likely backtracks catastrophically (nested `
        + 'quantifiers such as (a+)+ or (.*)*). Simplify it, or narrow the search with path or glob.'))), Math.max(0, this.deadline - Date.now()))
      if (this.signal.aborted) return onAbort()
      this.signal.addEventListener('abort', onAbort, { once: true })
      this.worker.on('message', onMessage)
      this.worker.on('error', onError)
      this.worker.postMessage({ text, limit })
    })
  }

  /** Ends the worker, also while it is stuck in a match. */
  async close(): Promise<void> {
    await this.started?.terminate()
  }
}
