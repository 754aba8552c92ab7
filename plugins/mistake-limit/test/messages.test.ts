// Every text of messages.ts with sample values, as file snapshots: a change of wording is a one-line diff
// in __snapshots__/messages.test.ts.snap, reviewed with the change.
import { describe, expect, it } from 'vitest'
import { blockText, defaultGuidance, stopText } from '../src/messages.ts'
import type { MistakeLimitState } from '../src/types.ts'

const failures = [
  { step: 4, tool: 'read', code: 'NOT_FOUND', message: 'no such file: src/a.ts.' },
  { step: 5, tool: 'edit', code: 'NO_MATCH', message: 'the old text was not found\nin src/b.ts' },
  { step: 6, tool: 'run_command', code: 'EXIT_1', message: 'npm test failed' },
  { step: 7, tool: 'read', code: 'NOT_FOUND', message: 'no such file: src/c.ts' },
]
const base = { turn: 3, step: 7, count: 5, limit: 5, window: { failed: 2, size: 6, limit: 4 }, failures }

const states: Record<string, MistakeLimitState> = {
  'consecutive failures': { ...base, cause: 'tool-failures' },
  'failure window': { ...base, cause: 'failure-window', window: { failed: 4, size: 6, limit: 4 } },
  'stale failures': { ...base, cause: 'stale-failures', stale: { failures: 6, calls: 9, limit: 6 } },
  'policy escalation, no failures listed': { ...base, cause: 'policy-escalation', failures: [] },
}

describe('mistake-limit messages', () => {
  for (const [name, state] of Object.entries(states)) {
    it(name, () => {
      expect(blockText(state)).toMatchSnapshot('block')
      expect(blockText(state, 'too many failures')).toMatchSnapshot('block with a decision')
      expect(stopText(state)).toMatchSnapshot('stop')
      expect(stopText(state, 'too many failures')).toMatchSnapshot('stop with a decision')
      expect(defaultGuidance(state)).toMatchSnapshot('guidance')
    })
  }
})
