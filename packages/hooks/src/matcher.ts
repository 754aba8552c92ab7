import path from 'node:path'

/** What one event offers to match against. */
export interface MatchTarget {
  /** Tool events: the tool's name and, when it declares one, its kind. */
  tool?: string
  kind?: string
  /** run_command's command line. */
  command?: string
  /** The workspace-relative path a tool touches. */
  path?: string
  /** Other events: the session source, the goal event, the compaction trigger. */
  value?: string
}

export type MatcherConfig = string | { tool?: string; command?: string; path?: string } | undefined

/** Claude Code's tool names, so that a matcher written for it (`Edit|Write`, `Bash`) finds goalkeeper's tools. */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = {
  Bash: 'run_command',
  Read: 'read_file',
  Write: 'write_file',
  Edit: 'edit_file',
  MultiEdit: 'edit_file',
  Grep: 'search',
  Glob: 'search',
  LS: 'list_dir',
}

const escape = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&')

/** `*` anything (Claude Code's `.*` too), every other character literal; `|` separates alternatives. */
function alternatives(pattern: string): (value: string | undefined) => boolean {
  const parts = pattern.split('|').map((part) => part.trim()).filter(Boolean)
  if (!parts.length || parts.includes('*')) return () => true
  const regex = new RegExp(`^(?:${parts.map((part) => part.replaceAll('.*', '*').split('*').map(escape).join('.*')).join('|')})$`)
  return (value) => value !== undefined && regex.test(value)
}

/** A path glob: `**` any number of directories, `*` and `?` within one name. Without a `/` it matches the file name. */
function pathGlob(pattern: string): (value: string | undefined) => boolean {
  const byName = !pattern.includes('/')
  let source = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/'
      source += slash ? '(?:.*/)?' : '.*'
      i += slash ? 2 : 1
    } else if (c === '*') source += '[^/]*'
    else if (c === '?') source += '[^/]'
    else source += escape(c)
  }
  const regex = new RegExp(`^${source}$`)
  return (value) => {
    if (value === undefined) return false
    const normal = path.posix.normalize(value.replaceAll('\\', '/')).replace(/^\.\//, '')
    return regex.test(byName ? path.posix.basename(normal) : normal)
  }
}

/** A command glob: `*` matches any run of characters, spaces and slashes included. */
function commandGlob(pattern: string): (value: string | undefined) => boolean {
  const regex = new RegExp(`^${pattern.split('*').map(escape).join('.*')}$`, 's')
  return (value) => value !== undefined && regex.test(value.trim())
}

/** Compiles a hook's matcher; no matcher matches every occurrence of the event. */
export function compileMatcher(matcher: MatcherConfig): (target: MatchTarget) => boolean {
  if (matcher === undefined || matcher === '') return () => true
  const spec = typeof matcher === 'string' ? { tool: matcher } : matcher
  const tool = spec.tool === undefined ? undefined : alternatives(spec.tool)
  const command = spec.command === undefined ? undefined : commandGlob(spec.command)
  const file = spec.path === undefined ? undefined : pathGlob(spec.path)
  return (target) => {
    if (tool) {
      const names = target.tool === undefined
        ? [target.value]
        : [target.tool, target.kind, ...Object.entries(CLAUDE_TOOL_NAMES).filter(([, name]) => name === target.tool).map(([alias]) => alias)]
      if (!names.some((name) => tool(name))) return false
    }
    if (command && !command(target.command)) return false
    if (file && !file(target.path)) return false
    return true
  }
}
