import { BUILTIN_CLASSES, type PermissionMode, type ToolClass } from './config.ts'
import { strongestRule, type CompiledRule } from './rules.ts'

/** What the mode and the rules say about one call, before anyone is asked. */
export type Decision =
  | { kind: 'allow'; by: 'mode' | 'rule' }
  | { kind: 'ask'; why: string }
  | { kind: 'deny'; reason: string }

const WHAT: Record<ToolClass, string> = {
  read: 'reads the workspace',
  write: 'changes files',
  command: 'runs a command',
  session: 'changes only the session',
  other: 'is not one of the workspace tools, so what it does is not known',
}

/** Which calls each mode lets through without asking. */
const ALLOWED: Record<PermissionMode, readonly ToolClass[]> = {
  'read-only': ['read', 'session'],
  // Commands: the sandbox confines them (or, without one, the tool refuses them).
  'workspace-write': ['read', 'session', 'write', 'command'],
  full: ['read', 'session', 'write', 'command', 'other'],
}

export function classify(tool: string, classes: Readonly<Record<string, ToolClass>>): ToolClass {
  return classes[tool] ?? BUILTIN_CLASSES[tool] ?? 'other'
}

export function decide(mode: PermissionMode, rules: readonly CompiledRule[], classes: Readonly<Record<string, ToolClass>>, tool: string, args: Readonly<Record<string, unknown>>): Decision {
  const rule = strongestRule(rules, tool, args)
  if (rule?.action === 'deny') return { kind: 'deny', reason: rule.reason ?? `the permission rule for ${rule.text} denies it` }
  if (rule?.action === 'ask') return { kind: 'ask', why: `the permission rule for ${rule.text} asks first` }
  if (rule?.action === 'allow') return { kind: 'allow', by: 'rule' }
  const kind = classify(tool, classes)
  if (ALLOWED[mode].includes(kind)) return { kind: 'allow', by: 'mode' }
  return { kind: 'ask', why: `${tool} ${WHAT[kind]}, which the ${mode} permission mode does not allow without asking` }
}
