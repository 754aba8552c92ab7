import type { SandboxStatus } from '@goalkeeper/sandbox'
import type { PermissionMode } from './config.ts'

/** The header line's words: what the mode allows, and how commands run, plainly (not hedged). */
export function summarize(mode: PermissionMode, network: boolean, sandbox: SandboxStatus): string {
  const sandboxed = sandbox.available
    ? `commands sandboxed by bubblewrap ${sandbox.version} (capabilities dropped, writes only in the workspace and a private /tmp, ${network ? 'network allowed' : 'no network'})`
    : `commands refused, no sandbox here: ${sandbox.reason}`
  switch (mode) {
    case 'full':
      return 'full: every tool runs with your rights, commands unsandboxed'
    case 'workspace-write':
      return `workspace-write: file tools inside the workspace; ${sandboxed}; other tools need a person's yes`
    case 'read-only':
      return `read-only: reading only; writes, commands and other tools need a person's yes${sandbox.available ? `, then ${sandboxed.replace('commands sandboxed', 'run sandboxed')}` : ''}`
  }
}
