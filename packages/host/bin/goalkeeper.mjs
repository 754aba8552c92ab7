#!/usr/bin/env node
// The CLI is TypeScript run from source: register tsx's loader, then start it.
import { register } from 'tsx/esm/api'

register()
await import('../src/cli.ts')
