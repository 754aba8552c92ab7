import { type FSWatcher, watch } from 'node:fs'

/**
 * Tells when the session store changed: one fs.watch per directory of session logs (no per-session
 * polling); for a database, which has no directory to watch, `pollMs` asks `probe` (one listing query)
 * for a stamp and reports a change when it differs.
 */
export interface StoreWatch {
  close(): void
}

export interface StoreWatchOptions {
  dirs: readonly string[]
  /** Called once per burst of changes, at most every `settleMs`. */
  onChange(): void
  settleMs?: number
  /** For stores without directories: a stamp of the whole store (e.g. the newest activity and count). */
  probe?: () => Promise<string>
  pollMs?: number
}

export function watchStore(options: StoreWatchOptions): StoreWatch {
  const settleMs = options.settleMs ?? 150
  let timer: ReturnType<typeof setTimeout> | undefined
  let closed = false
  const changed = () => {
    if (closed || timer) return
    // A round writes many records in a burst: one notice for the burst.
    timer = setTimeout(() => {
      timer = undefined
      if (!closed) options.onChange()
    }, settleMs)
  }
  const watchers: FSWatcher[] = []
  for (const dir of options.dirs) {
    try {
      // Only the logs count: the listing's own index (.summaries), rewritten by the board's listing, must not
      // wake the board again.
      const watcher = watch(dir, (_event, name) => {
        if (name === null || String(name).endsWith('.jsonl')) changed()
      })
      // A directory removed under the board ends its watch, not the board.
      watcher.on('error', () => watcher.close())
      watchers.push(watcher)
    } catch {
      // A directory that does not exist yet holds no sessions; the listing says so.
    }
  }
  let poll: ReturnType<typeof setInterval> | undefined
  if (!options.dirs.length && options.probe) {
    let last: string | undefined
    let busy = false
    poll = setInterval(async () => {
      if (busy) return
      busy = true
      try {
        const stamp = await options.probe!()
        if (last !== undefined && stamp !== last) changed()
        last = stamp
      } catch {
        // The next probe tries again; the page keeps what it shows.
      } finally {
        busy = false
      }
    }, options.pollMs ?? 3000)
  }
  return {
    close() {
      closed = true
      clearTimeout(timer)
      clearInterval(poll)
      for (const watcher of watchers) watcher.close()
    },
  }
}
