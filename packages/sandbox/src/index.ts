export { probeSandbox, type SandboxStatus } from './probe.ts'
export { privilegeFlags, sandboxedCommand, SANDBOX_UID, type CommandSandbox, type CommandSandboxProvider, type SandboxPolicy } from './bwrap.ts'
