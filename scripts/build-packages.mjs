// `npm run build:packages [-- --out DIR]`: the @goalkeeper/* packages an outside plugin author depends on,
// as they would be published: JavaScript and type declarations compiled by tsc into each package's dist/,
// then packed by pnpm into DIR (default dist/packs) as *.tgz (pnpm applies each package's publishConfig,
// which points main, types and exports at dist/, and turns workspace:* versions into real ones). They are
// not in the npm registry: a plugin's package installs them from DIR (`npm install DIR/*.tgz`, all at
// once, since they depend on one another). The list is tsconfig.publish.json's.
import { execFileSync } from 'node:child_process'
import { cp, mkdir, readdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const config = JSON.parse(await readFile(path.join(root, 'tsconfig.publish.json'), 'utf8'))
const packages = config.include.map((source) => path.dirname(source))
const out = path.join(root, config.compilerOptions.outDir)
const flag = process.argv.indexOf('--out')
if (flag >= 0 && !process.argv[flag + 1]) throw new Error('--out needs a directory')
// Relative to where the command was typed (npm run keeps it in INIT_CWD), as a person means it.
const packs = flag >= 0 ? path.resolve(process.env.INIT_CWD ?? process.cwd(), process.argv[flag + 1]) : path.join(root, 'dist', 'packs')

await rm(out, { recursive: true, force: true })
await mkdir(packs, { recursive: true })
// The folder may be the author's own: only earlier packs of these packages are replaced.
for (const file of await readdir(packs)) if (/^goalkeeper-[a-z-]+-\d+\.\d+\.\d+.*\.tgz$/.test(file)) await rm(path.join(packs, file))
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.publish.json')], { cwd: root, stdio: 'inherit' })
for (const dir of packages) {
  await rm(path.join(root, dir, 'dist'), { recursive: true, force: true })
  await cp(path.join(out, dir, 'src'), path.join(root, dir, 'dist'), { recursive: true })
  execFileSync('npx', ['-y', 'pnpm@12.4.2', 'pack', '--pack-destination', packs], { cwd: path.join(root, dir), stdio: ['ignore', 'ignore', 'inherit'] })
}

process.stderr.write(`packed ${packages.length} packages into ${packs}/; in your plugin's package: npm install ${path.join(packs, '*.tgz')}\n`)
