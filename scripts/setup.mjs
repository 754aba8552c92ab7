// Installs the workspace from the lockfile when node_modules is missing or older than the lockfile,
// so `npm start` and `npm test` work on a fresh clone with only Node and npm; and, where apt is there
// and we are root (a CI container), bubblewrap, the sandbox run_command uses (packages/sandbox), and
// Chromium, the browser the goal board's tests drive (packages/board).
import { execSync, spawnSync } from 'node:child_process'
import { existsSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// pnpm leaves node_modules untouched when it has nothing to do, so the install keeps its own stamp.
const stamp = join(root, 'node_modules', '.goalkeeper-install')
const lock = join(root, 'pnpm-lock.yaml')
const fresh = existsSync(stamp) && statSync(stamp).mtimeMs >= statSync(lock).mtimeMs
if (!fresh || process.env.GOALKEEPER_FORCE_INSTALL) {
  process.stderr.write('goalkeeper: installing dependencies from the lockfile (pnpm 12.4.2)...\n')
  execSync('npx -y pnpm@12.4.2 install --frozen-lockfile --reporter=append-only', { cwd: root, stdio: ['ignore', 2, 2] })
  writeFileSync(stamp, `${new Date().toISOString()}\n`)
}

// Once: only while bwrap is missing. Quiet: apt's output only when it fails. Never fatal: without the
// sandbox goalkeeper still runs (workspace-write refuses commands, and `goalkeeper check` says why).
const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0
if (process.platform === 'linux' && process.getuid?.() === 0 && !has('bwrap') && has('apt-get')) {
  process.stderr.write('goalkeeper: installing bubblewrap (the command sandbox) with apt-get...\n')
  const install = () => spawnSync('apt-get', ['install', '-y', '-qq', 'bubblewrap'], { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  let result = install()
  // A fresh container has no package lists yet.
  if (result.status !== 0) {
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore' })
    result = install()
  }
  if (result.status !== 0) process.stderr.write(`goalkeeper: could not install bubblewrap; commands will be refused in workspace-write:\n${result.stderr}\n`)
}

// The board's browser tests drive Debian's Chromium; without it they fail saying what is missing.
if (process.platform === 'linux' && process.getuid?.() === 0 && !has('chromium') && has('apt-get') && !process.env.GOALKEEPER_CHROMIUM) {
  process.stderr.write('goalkeeper: installing chromium (for the goal board\'s browser tests) with apt-get...\n')
  const install = () => spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  let result = install()
  if (result.status !== 0) {
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore' })
    result = install()
  }
  if (result.status !== 0) process.stderr.write(`goalkeeper: could not install chromium; the board's browser tests will fail until it is there (or GOALKEEPER_CHROMIUM names one):\n${result.stderr}\n`)
}
