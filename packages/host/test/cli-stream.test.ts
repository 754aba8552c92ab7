// Stream trouble of a real (local) HTTP model is never silent: progress lines on stderr, `stream` objects
// with --json. The CLI runs as a child process; only the local server's answers are scripted.
import { describe, expect, it } from 'vitest'
import { delta, startSse, textReply, useOpenAIServers } from '@goalkeeper/test-kit'
import { CLI_TIMEOUT, jsonLines, localModelProject, run, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const serve = useOpenAIServers()

describe('goalkeeper on a stalled or broken model stream', { timeout: CLI_TIMEOUT }, () => {
  it('says while the stream is silent, says when it broke and is asked again; --json carries both as stream objects', async () => {
    const server = await serve([async (res) => {
      startSse(res)
      res.write(delta({ role: 'assistant', content: 'Hello!' }))
      // Paces the server: silent for a few notice intervals, then the connection drops.
      await new Promise((resolve) => setTimeout(resolve, 450))
      res.socket!.destroy()
    }, textReply("I'm unable to say more.")])
    const p = await project(localModelProject(server.url, { entry: { stallNoticeMs: 150, idleTimeoutMs: 5000 } }))
    const { code, stdout, stderr } = await run([...p.globals, '--json', 'run', 'greet me'])
    expect(code, stderr).toBe(0)
    const lines = stderr.split('\n')
    expect(lines).toContain('  no data from the model for 0.15 s (local; gives up after 5 s)')
    expect(lines).toContain('  model stream broke after 1 frame; asking again (1 of 1)')
    const streams = jsonLines(stdout).filter((line) => line.type === 'stream')
    expect(streams[0]).toEqual({ type: 'stream', session: expect.any(String), provider: 'local', kind: 'stalled', silentMs: 150, limitMs: 5000 })
    expect(streams.at(-1)).toMatchObject({ type: 'stream', provider: 'local', kind: 'broken', frames: 1, error: { code: 'TRANSPORT' } })
    expect(jsonLines(stdout).at(-1)).toMatchObject({ type: 'result', exitCode: 0 })
  })
})
