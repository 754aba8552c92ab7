export { probeSandbox, type SandboxStatus } from './probe.ts'
export { sandboxedCommand, type CommandSandbox, type CommandSandboxProvider, type SandboxPolicy } from './bwrap.ts'
