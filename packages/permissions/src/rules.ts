import type { PermissionRule, RuleAction } from './config.ts'
import { commandsIn, TOO_DEEP } from './shell.ts'

/** `*` matches any characters, newlines included; everything else is literal. */
function pattern(source: string): RegExp {
  const body = source.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('[\\s\\S]*')
  return new RegExp(`^${body}$`)
}

/** Shell syntax that chains or nests commands: `npm test; curl ...` must not pass as `npm test*`. */
const COMPOUND = /[;&|<>`\n\r]|\$\(/

export interface CompiledRule {
  action: RuleAction
  reason?: string
  /** The rule as written, for messages. */
  text: string
  matches(tool: string, args: Readonly<Record<string, unknown>>): boolean
}

/** Checks and compiles the configured rules; a bad one throws naming its index, so the loader names the entry. */
export function compileRules(rules: readonly PermissionRule[]): CompiledRule[] {
  return rules.map((rule, index) => {
    if (rule.tool === undefined && rule.command === undefined) throw new Error(`rules[${index}]: give a tool, a command, or both`)
    if (rule.command !== undefined && rule.tool !== undefined && rule.tool !== 'run_command') {
      throw new Error(`rules[${index}]: a command pattern applies to run_command only, not to "${rule.tool}"`)
    }
    const tool = pattern(rule.tool ?? 'run_command')
    const command = rule.command === undefined ? undefined : pattern(rule.command.trim())
    const text = rule.command === undefined ? `tool ${rule.tool}` : `command ${JSON.stringify(rule.command)}`
    return {
      action: rule.action,
      reason: rule.reason,
      text,
      matches(name, args) {
        if (!tool.test(name)) return false
        if (!command) return true
        const line = typeof args.command === 'string' ? args.command.trim() : ''
        // An allow rule vouches for one simple command; a deny or ask rule looks into every part of a compound one.
        if (rule.action === 'allow') return !COMPOUND.test(line) && command.test(line)
        // A command nested too deep to read could be anything: a deny or ask rule holds for it.
        return command.test(line) || commandsIn(line).some((part) => part === TOO_DEEP || command.test(part))
      },
    }
  })
}

/** The strongest matching rule: deny over ask over allow, whatever their order. */
export function strongestRule(rules: readonly CompiledRule[], tool: string, args: Readonly<Record<string, unknown>>): CompiledRule | undefined {
  const matching = rules.filter((rule) => rule.matches(tool, args))
  for (const action of ['deny', 'ask', 'allow'] as const) {
    const rule = matching.find((candidate) => candidate.action === action)
    if (rule) return rule
  }
  return undefined
}
