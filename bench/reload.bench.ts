// `--watch` reload latency: from the write of a changed cordis.yml to the loader's `reload` event, next to
// the bare file-watch event latency measured in the same run (fs.watch on the same directory). Target:
// reload < 50 ms after the change. Run alone: node --import tsx bench/reload.bench.ts
import { watch } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { Loader } from '@goalkeeper/loader'

const ROUNDS = 25
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const yml = (round: number) => `- id: counter\n  name: ./plugin.mjs\n  config: { round: ${round} }\n`

export async function run() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-reload-'))
  const file = path.join(dir, 'cordis.yml')
  await writeFile(path.join(dir, 'plugin.mjs'), 'export const name = "counter"\nexport const apply = () => {}\n')
  await writeFile(file, yml(0))
  const ctx = new Context()
  const loader = new Loader(ctx, { file, env: {} })
  await loader.load()
  loader.watch()
  const raw: number[] = []
  const reload: number[] = []
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      // The bare event: a watcher of its own on the same directory, the first event after the write.
      const event = new Promise<number>((resolve) => {
        const watcher = watch(dir, () => {
          watcher.close()
          resolve(performance.now())
        })
      })
      const reloaded = new Promise<number>((resolve) => {
        const off = loader.on('reload', () => {
          off()
          resolve(performance.now())
        })
      })
      const start = performance.now()
      await writeFile(file, yml(round))
      raw.push((await event) - start)
      reload.push((await reloaded) - start)
    }
  } finally {
    await loader.dispose()
    await rm(dir, { recursive: true, force: true })
  }
  const value = median(reload)
  console.log(`file event (fs.watch)              ${median(raw).toFixed(1).padStart(6)} ms`)
  console.log(`reload after the write (--watch)   ${value.toFixed(1).padStart(6)} ms   target < 50 ms ${value < 50 ? 'OK' : 'MISSED'}`)
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await run()
