import { type ChildProcess, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import net from 'node:net'
import type { Context } from 'cordis'

/** The reference server's entry point (dev dependency), run with this Node. */
export const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js')

export const stdioConfig = (extra: Record<string, unknown> = {}) => ({ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'], ...extra })

/** Resolves with the server's tool names at its next `mcp/connected`. */
export const connected = (ctx: Context, server = 'everything') =>
  new Promise<string[]>((resolve) => {
    const stop = ctx.on('mcp/connected', (name, tools) => {
      if (name !== server) return
      stop()
      resolve(tools)
    })
  })

/** Whether a process id still names a live process. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Resolves once the process has exited (its pipes closed). */
export const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())))

async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The reference server over streamable HTTP on 127.0.0.1, ready when it says it listens. */
export async function startHttpServer(): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort()
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] })
  await new Promise<void>((resolve, reject) => {
    let text = ''
    child.stderr!.on('data', (chunk) => {
      text += chunk
      if (/listening on port/.test(text)) resolve()
    })
    child.once('exit', (code) => reject(new Error(`the HTTP server exited (${code}): ${text}`)))
  })
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    stop: async () => {
      child.kill('SIGKILL')
      await exited(child)
    },
  }
}
