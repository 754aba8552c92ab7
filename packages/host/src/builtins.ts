import type { BuiltinPlugins } from '@goalkeeper/loader'

/**
 * The plugins goalkeeper carries: every package of its default composition, and the MCP and hooks plugins its README offers. A cordis.yml entry with one
 * of these names gets goalkeeper's own copy, so an installed CLI (one bundled file, no node_modules) runs
 * any cordis.yml that names them, and a checkout runs the same code it tests. Imported only when an entry
 * names them, which keeps commands that load no composition (`--help`, `sessions`) from paying for them.
 */
export const builtinPlugins: BuiltinPlugins = {
  // A session entry brings its store (`dir` or `database`), unless a store entry above it provides one.
  '@goalkeeper/session': () => import('./session-entry.ts'),
  '@goalkeeper/session-jsonl': () => import('@goalkeeper/session-jsonl'),
  '@goalkeeper/session-postgres': () => import('@goalkeeper/session-postgres'),
  '@goalkeeper/model': () => import('@goalkeeper/model'),
  '@goalkeeper/model-openai': () => import('@goalkeeper/model-openai'),
  '@goalkeeper/model-anthropic': () => import('@goalkeeper/model-anthropic'),
  '@goalkeeper/tools': () => import('@goalkeeper/tools'),
  '@goalkeeper/workspace-tools': () => import('@goalkeeper/workspace-tools'),
  '@goalkeeper/permissions': () => import('@goalkeeper/permissions'),
  '@goalkeeper/mcp': () => import('@goalkeeper/mcp'),
  '@goalkeeper/hooks': () => import('@goalkeeper/hooks'),
  '@goalkeeper/agent-loop': () => import('@goalkeeper/agent-loop'),
  '@goalkeeper/goal': () => import('@goalkeeper/goal'),
  '@goalkeeper/tool-goal': () => import('@goalkeeper/tool-goal'),
  '@goalkeeper/project-instructions': () => import('@goalkeeper/project-instructions'),
  '@goalkeeper/goal-budget': () => import('@goalkeeper/goal-budget'),
  '@goalkeeper/goal-judge': () => import('@goalkeeper/goal-judge'),
  '@goalkeeper/goal-auto-resume': () => import('@goalkeeper/goal-auto-resume'),
  '@goalkeeper/notifier': () => import('@goalkeeper/notifier'),
  '@goalkeeper/control': () => import('@goalkeeper/control'),
  '@goalkeeper/loop-guard': () => import('@goalkeeper/loop-guard'),
  '@goalkeeper/mistake-limit': () => import('@goalkeeper/mistake-limit'),
  '@goalkeeper/no-progress': () => import('@goalkeeper/no-progress'),
  '@goalkeeper/goal-session': () => import('@goalkeeper/goal-session'),
  '@goalkeeper/loader': () => import('@goalkeeper/loader'),
  '@goalkeeper/fleet': () => import('@goalkeeper/fleet'),
}
