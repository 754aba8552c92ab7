import { existsSync } from 'node:fs'
import { type Browser, type BrowserContext, chromium } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { type Project, start } from '@goalkeeper/test-kit'

/** Debian's Chromium (`npm run setup` installs it as root where apt is there), or GOALKEEPER_CHROMIUM. */
export const CHROMIUM = process.env.GOALKEEPER_CHROMIUM ?? '/usr/bin/chromium'

/** A headless Chromium; fails naming what is missing and how to get it, rather than skipping the browser tests. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the board's browser tests need Chromium at ${CHROMIUM}, which is missing: run \`npm run setup\` as root on a system with apt-get (it installs Debian's chromium), or install Chromium and set GOALKEEPER_CHROMIUM to its executable`)
  }
  // --no-sandbox: test containers run as root, where Chromium's own sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
}

/**
 * One headless Chromium for the tests of a file: launched before them, closed after them. Call at the top
 * level of the file; tests open their own contexts (`browser.newContext()`), which keeps them apart.
 */
export function useBrowser(): { newContext(options?: Parameters<Browser['newContext']>[0]): Promise<BrowserContext> } {
  let browser: Browser | undefined
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
  })
  return {
    newContext(options) {
      if (!browser) throw new Error('the browser is not running: its launch in beforeAll failed (see above)')
      return browser.newContext(options)
    },
  }
}

/** `goalkeeper board` of a project as a child process, once it printed its address. */
export async function startBoardChild(p: Project, args: string[] = [], env?: Record<string, string>) {
  const child = start([...p.globals, 'board', ...args], { env })
  await child.waitFor('stdout', /^http:\/\/127\.0\.0\.1:\d+\/\?token=\S+\n/)
  const url = child.stdout().trim()
  return { child, url, origin: new URL(url).origin }
}
