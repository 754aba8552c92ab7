// The permission header's words for every mode and sandbox state, as file snapshots: a change of wording is
// a one-line diff in __snapshots__/describe.test.ts.snap.
import { describe, expect, it } from 'vitest'
import type { SandboxStatus } from '@goalkeeper/sandbox'
import { summarize } from '../src/describe.ts'

const sandbox: SandboxStatus = { available: true, tool: 'bubblewrap', path: '/usr/bin/bwrap', version: '0.9.0', capabilities: 'dropped', uid: 1000 }
const none: SandboxStatus = { available: false, reason: 'bwrap not found: install the Debian/Ubuntu package bubblewrap (apt-get install bubblewrap)' }

describe('summarize', () => {
  for (const mode of ['full', 'workspace-write', 'read-only'] as const) {
    it(mode, () => {
      expect(summarize(mode, false, sandbox)).toMatchSnapshot('sandbox, no network')
      expect(summarize(mode, true, sandbox)).toMatchSnapshot('sandbox, network')
      expect(summarize(mode, false, none)).toMatchSnapshot('no sandbox')
    })
  }
})
