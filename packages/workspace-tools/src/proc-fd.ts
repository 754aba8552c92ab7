import { closeSync, constants, fstatSync, lstatSync, openSync, statSync } from 'node:fs'

let works: boolean | undefined

/**
 * Whether `/proc/self/fd/<fd>/<name>` names `name` in the directory the descriptor holds, whatever
 * has become of the path it was opened by (Linux with /proc mounted: the kernel follows the
 * descriptor, not a path). Node has no openat, and this path is what stands in for it. Probed once,
 * on first use.
 */
export function descriptorPaths(): boolean {
  return (works ??= probe())
}

function probe(): boolean {
  if (process.platform !== 'linux') return false
  let fd: number | undefined
  try {
    fd = openSync('/', constants.O_RDONLY | constants.O_DIRECTORY)
    const held = fstatSync(fd)
    const named = statSync(`/proc/self/fd/${fd}/.`)
    return lstatSync(`/proc/self/fd/${fd}`).isSymbolicLink() && named.ino === held.ino && named.dev === held.dev
  } catch {
    return false
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}
