// Runs every bench/*.bench.ts in turn (alphabetical), each through its exported `run()`, which prints
// its own figures. Benchmarks run one at a time so they do not compete for the disk and the CPU.
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const only = process.argv.slice(2)
const files = (await readdir(here)).filter((name) => name.endsWith('.bench.ts') && (!only.length || only.some((o) => name.includes(o)))).sort()

for (const name of files) {
  console.log(`\n== ${name}`)
  try {
    const module = (await import(pathToFileURL(path.join(here, name)).href)) as { run?: () => Promise<unknown> }
    if (typeof module.run !== 'function') throw new Error(`${name} does not export run()`)
    await module.run()
  } catch (error) {
    console.error(`${name} failed:`, error)
    process.exitCode = 1
  }
}
