// `npm run build`: the installable CLI. Bundles the host and every plugin of the default composition
// into dist/goalkeeper/ (plain JavaScript, no TypeScript loader at run time, no dependencies to install),
// next to the default cordis.yml and the demo model it names, with a package.json that `npm pack` and
// `npm install -g` take as is. Tests and `npm test` keep running from source; this is for installs.
import { existsSync } from 'node:fs'
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const out = path.join(root, 'dist', 'goalkeeper')
const host = JSON.parse(await readFile(path.join(root, 'packages/host/package.json'), 'utf8'))
const project = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'))

await rm(out, { recursive: true, force: true })
await mkdir(out, { recursive: true })

const result = await build({
  metafile: true,
  absWorkingDir: root,
  entryPoints: {
    goalkeeper: 'packages/host/src/cli.ts',
    // Named in cordis.yml by path, so it sits where that path points from the copied cordis.yml.
    'demo/goal-script': 'demo/goal-script.mjs',
  },
  outdir: out,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  // Chunks keep what a command imports lazily (the ACP server, the agent stack) out of `--help`.
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'linked',
  sourcemap: 'linked',
  define: { __GOALKEEPER_BUILD__: JSON.stringify({ version: host.version }) },
  // Bundled CommonJS dependencies call require() for Node's own modules.
  banner: { js: "import { createRequire as __gkRequire } from 'node:module'; const require = __gkRequire(import.meta.url);" },
  logLevel: 'warning',
})

// Which source files each output holds: tests read it to check what `--help` loads.
await writeFile(path.join(root, 'dist', 'goalkeeper-meta.json'), JSON.stringify(result.metafile))
await cp(path.join(root, 'cordis.yml'), path.join(out, 'cordis.yml'))
await cp(path.join(root, 'demo', 'workspace'), path.join(out, 'demo', 'workspace'), { recursive: true })
const entry = path.join(out, 'goalkeeper.mjs')
await writeFile(entry, `#!/usr/bin/env node\n${await readFile(entry, 'utf8')}`, { mode: 0o755 })
await writeFile(path.join(out, 'package.json'), `${JSON.stringify({
  name: 'goalkeeper',
  version: host.version,
  description: project.description,
  type: 'module',
  bin: { goalkeeper: './goalkeeper.mjs' },
  engines: project.engines,
  license: project.license,
}, null, 2)}\n`)
await cp(path.join(root, 'docs/install.md'), path.join(out, 'README.md'))
// The READMEs and guides the CLI's help and messages point to, at their paths in the repository (home.ts's docFile).
const docs = ['docs/plugins.md', 'docs/DESIGN.md']
for (const group of ['packages', 'plugins']) {
  for (const name of await readdir(path.join(root, group))) {
    if (name !== 'test-kit' && existsSync(path.join(root, group, name, 'README.md'))) docs.push(`${group}/${name}/README.md`)
  }
}
for (const file of docs) await cp(path.join(root, file), path.join(out, file))
// The contract of --json output, which the host README points to.
await cp(path.join(root, 'packages/host/schema'), path.join(out, 'schema'), { recursive: true })
process.stderr.write(`built ${path.relative(root, out)}/ (goalkeeper ${host.version})\n`)
