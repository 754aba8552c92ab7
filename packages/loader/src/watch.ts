import { watch } from 'node:fs'
import path from 'node:path'

/**
 * Calls `change` once the file has been quiet for `debounceMs` after a change. Watches the directory, not
 * the file: editors save by writing a new file and renaming it over the old one, which ends a file watch.
 */
export function watchFile(
  file: string,
  debounceMs: number,
  handlers: { change: () => void; error: (error: Error) => void },
): () => void {
  const base = path.basename(file)
  let timer: NodeJS.Timeout | undefined
  const watcher = watch(path.dirname(file), (_event, filename) => {
    // Some platforms do not report the name; then any change in the directory counts.
    if (filename && filename.toString() !== base) return
    clearTimeout(timer)
    timer = setTimeout(handlers.change, debounceMs)
  })
  watcher.on('error', (error) => {
    clearTimeout(timer)
    watcher.close()
    handlers.error(error)
  })
  return () => {
    clearTimeout(timer)
    watcher.close()
  }
}
