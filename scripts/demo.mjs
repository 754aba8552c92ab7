// `npm start`: the offline demo. Copies demo/workspace/ to a fresh .goalkeeper/demo-workspace/ and runs
// one goal there with the default cordis.yml, so the repository tree itself is never modified.
import { spawn } from 'node:child_process'
import { cp, mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const workspace = path.join('.goalkeeper', 'demo-workspace')
const objective = 'Create NOTES.md in the workspace with a summary of every file in it'
// Absolute, as the CLI's own hints give it: --config is read from the --cwd directory.
const globals = ['--cwd', workspace, '--config', path.join(root, 'cordis.yml')]
const say = (text) => process.stderr.write(`${text}\n`)

await rm(path.join(root, workspace), { recursive: true, force: true })
await mkdir(path.join(root, '.goalkeeper'), { recursive: true })
await cp(path.join(root, 'demo', 'workspace'), path.join(root, workspace), { recursive: true })

const realModel = ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY'].find((name) => process.env[name])
say('goalkeeper demo: an agent pursues a goal in automatic rounds until it is done.')
say(`  goal:       ${objective}`)
say(`  workspace:  ${workspace}/ (a fresh copy of demo/workspace/; the repository is not touched)`)
say(realModel
  ? `  model:      a real one, because ${realModel} is set`
  : '  model:      the offline scripted demo model (export DEEPSEEK_API_KEY or OPENAI_API_KEY to use a real one)')
say('')

// The built CLI (npm start builds it first), as an installed goalkeeper runs: no TypeScript loader.
const child = spawn(process.execPath, ['dist/goalkeeper/goalkeeper.mjs', ...globals, 'goal', objective, '--max-rounds', '5'], {
  cwd: root,
  stdio: 'inherit',
})
// Ctrl-C at a terminal reaches the child too (the first one pauses the goal), so the wrapper only waits for
// it. A signal sent to this wrapper alone is passed on, so that the goal is paused and not orphaned.
process.on('SIGINT', () => {})
for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal))
const code = await new Promise((resolve) => child.on('close', (status, signal) => resolve(status ?? (signal ? 130 : 1))))

say('')
if (code === 0) {
  say('Demo complete: the goal is done (exit code 0).')
  say(`  see the result:   cat ${path.join(workspace, 'NOTES.md')}`)
} else {
  say(`The demo goal stopped with exit code ${code}; the lines above say why and how to go on (\`npx goalkeeper goal --help\` lists the codes).`)
}
say(`  try it yourself:  npx goalkeeper ${globals.join(' ')} chat`)
say('  slower, to watch: GOALKEEPER_DEMO_DELAY_MS=1500 npm start   (Ctrl-C pauses the goal)')
say('  every command:    npx goalkeeper --help')
process.exitCode = code
