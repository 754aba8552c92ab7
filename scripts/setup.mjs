// Installs the workspace from the lockfile when node_modules is missing or older than the lockfile,
// so `npm start` and `npm test` work on a fresh clone with only Node and npm.
import { execSync } from 'node:child_process'
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
