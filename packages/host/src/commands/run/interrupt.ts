import type { InterruptAction } from '@goalkeeper/goal-session'

export { interruptWork, type InterruptAction } from '@goalkeeper/goal-session'

export function describeInterrupt(action: InterruptAction): string {
  return action === 'cancelled' ? 'Ctrl-C: cancelled the running turn' : 'Ctrl-C: paused the goal'
}
