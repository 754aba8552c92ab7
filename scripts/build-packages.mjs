// `npm run build:packages`: the @goalkeeper/* packages an outside plugin author depends on, as they are
// published: JavaScript and type declarations compiled by tsc into each package's dist/, then packed by
// pnpm into dist/packs/*.tgz (pnpm applies each package's publishConfig, which points main, types and
// exports at dist/, and turns workspace:* versions into real ones). The list is tsconfig.publish.json's.
import { execFileSync } from 'node:child_process'
import { cp, mkdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const config = JSON.parse(await readFile(path.join(root, 'tsconfig.publish.json'), 'utf8'))
const packages = config.include.map((source) => path.dirname(source))
const out = path.join(root, config.compilerOptions.outDir)
const packs = path.join(root, 'dist', 'packs')

await rm(out, { recursive: true, force: true })
await rm(packs, { recursive: true, force: true })
await mkdir(packs, { recursive: true })
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.publish.json')], { cwd: root, stdio: 'inherit' })
for (const dir of packages) {
  await rm(path.join(root, dir, 'dist'), { recursive: true, force: true })
  await cp(path.join(out, dir, 'src'), path.join(root, dir, 'dist'), { recursive: true })
  execFileSync('npx', ['-y', 'pnpm@12.4.2', 'pack', '--pack-destination', packs], { cwd: path.join(root, dir), stdio: ['ignore', 'ignore', 'inherit'] })
}
process.stderr.write(`packed ${packages.length} packages into ${path.relative(root, packs)}/\n`)
