import type { Context } from 'cordis'
import Schema from 'schemastery'
import { userConfigDir } from '@goalkeeper/kit'
import type {} from '@goalkeeper/agent-loop'
import { discoverFiles, type InstructionsFile } from './discover.ts'
import { FileCache, renderSection } from './render.ts'

export { discoverFiles, type InstructionsFile } from './discover.ts'
export { HEADING } from './render.ts'

/** `ctx.projectInstructions`: which files apply to a workspace, and the switch a front end turns off for one run. */
export interface ProjectInstructionsService {
  /** Off: nothing is added to system prompts (`--no-project-instructions`). */
  enabled: boolean
  /** The files that apply to `cwd`, most general first. */
  files(cwd: string): InstructionsFile[]
}

declare module 'cordis' {
  interface Context {
    /** The AGENTS.md files in every system prompt, and the per-run switch. */
    projectInstructions: ProjectInstructionsService
  }
}

export const name = 'project-instructions'
export const inject: string[] = []

export const Config = Schema.object({
  enabled: Schema.boolean().default(true).description('Add the AGENTS.md files to every agent\'s system prompt.'),
  fileName: Schema.string().default('AGENTS.md').description('Name of the instructions files.'),
  maxChars: Schema.natural().min(1).default(32_768).description('Cap on the characters of all files together; the farthest are cut first, with a note.'),
  user: Schema.boolean().default(true).description('Also read the user-level file in $XDG_CONFIG_HOME/goalkeeper/ (default ~/.config/goalkeeper/).'),
})

export type Config = Schemastery.TypeT<typeof Config>

export const apply = (ctx: Context, config: Config) => {
  const cache = new FileCache()
  // Read at load time, like every other environment-derived setting.
  const userDir = config.user ? userConfigDir(process.env) : undefined
  const service: ProjectInstructionsService = {
    enabled: config.enabled,
    files: (cwd) => discoverFiles(cwd, config.fileName, userDir),
  }
  ctx.effect(function* () {
    yield ctx.on('agent/system-prompt', (agent, parts) => {
      if (!service.enabled) return
      const cwd = agent.session.header.cwd
      const section = renderSection(service.files(cwd), cache, cwd, config.maxChars)
      if (section) parts.push(section)
    })
    yield ctx.provide('projectInstructions', service)
  }, 'project-instructions')
}
