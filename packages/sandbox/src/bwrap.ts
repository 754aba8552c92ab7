/** What one sandboxed command may do. Every path is absolute and real (symbolic links resolved). */
export interface SandboxPolicy {
  /** The bwrap executable (from `probeSandbox`). */
  bwrap: string
  /** Directories the command may write (the workspace); everything else is read-only. */
  writable: readonly string[]
  /** Directories inside `writable` that stay read-only (the session store). */
  readOnly: readonly string[]
  /** Whether the command shares the host's network; otherwise it has only its own loopback. */
  network: boolean
  /** Where the command starts, inside the sandbox. */
  cwd: string
}

/**
 * The command line that runs `argv` in a bubblewrap sandbox: the host's file system mounted read-only, a
 * fresh /dev and a private /tmp, the writable directories bound back read-write (after /tmp, so a
 * workspace under /tmp is still the real one), without network a private /run as well, the read-only exceptions bound over them last, a new PID
 * namespace with its own /proc (host processes and their environments are invisible), no network unless
 * allowed, and the sandbox killed with the process that started it. The environment is the caller's
 * (already scrubbed of secrets): bwrap passes it through.
 */
export function sandboxedCommand(policy: SandboxPolicy, argv: readonly string[]): { file: string; args: string[] } {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp']
  // Unix sockets of host daemons (docker, dbus) live here, and a read-only mount does not stop a connect():
  // without network they are hidden too. With network, name resolution may need them (systemd-resolved).
  if (!policy.network) args.push('--tmpfs', '/run')
  for (const dir of policy.writable) args.push('--bind', dir, dir)
  for (const dir of policy.readOnly) args.push('--ro-bind', dir, dir)
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try')
  if (!policy.network) args.push('--unshare-net')
  args.push('--die-with-parent', '--setenv', 'TMPDIR', '/tmp', '--chdir', policy.cwd, '--', ...argv)
  return { file: policy.bwrap, args }
}

/**
 * How one command must run, as the permission mode decides it (`ctx.permissions.commandSandbox(call)`):
 * as the user (`none`, the `full` mode), in bubblewrap, or not at all because the mode wants a sandbox
 * this machine cannot give (never silently unsandboxed).
 */
export type CommandSandbox =
  | { kind: 'none' }
  | { kind: 'bubblewrap'; bwrap: string; network: boolean }
  | { kind: 'unavailable'; reason: string }

/** What the tools that run commands ask of `ctx.permissions` (the permissions plugin), without importing it. */
export interface CommandSandboxProvider {
  commandSandbox(call: { agent: object }): CommandSandbox
}
