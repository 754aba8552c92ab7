/**
 * Whether process `pid` exists on this host. EPERM means it runs under another user: alive. Only ESRCH
 * says it is gone, so a doubtful answer never lets a caller take over what a live process holds.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}
