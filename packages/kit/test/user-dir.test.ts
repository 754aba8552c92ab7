import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { userConfigDir } from '../src/index.ts'

describe('userConfigDir', () => {
  it('is $XDG_CONFIG_HOME/goalkeeper when it is absolute, else ~/.config/goalkeeper', () => {
    expect(userConfigDir({ XDG_CONFIG_HOME: '/xdg', HOME: '/home/me' })).toBe(path.join('/xdg', 'goalkeeper'))
    expect(userConfigDir({ XDG_CONFIG_HOME: 'relative', HOME: '/home/me' })).toBe(path.join('/home/me', '.config', 'goalkeeper'))
    expect(userConfigDir({ HOME: '/home/me' })).toBe(path.join('/home/me', '.config', 'goalkeeper'))
  })
})
