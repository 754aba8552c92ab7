/** What one sandboxed command may do. Every path is absolute and real (symbolic links resolved). */
export interface SandboxPolicy {
  /** The bwrap executable (from `probeSandbox`). */
  bwrap: string
  /** Directories the command may write (the workspace); everything else is read-only. */
  writable: readonly string[]
  /** Directories that stay read-only wherever they are, even inside `writable` (the session stores). */
  readOnly: readonly string[]
  /**
   * What the command must not read at all (the session signing key): each existing directory is covered
   * by an empty read-only one, each existing file by an unreadable one. Mounted last, over everything.
   */
  hidden?: readonly { path: string; directory: boolean }[]
  /** Whether the command shares the host's network; otherwise it has only its own loopback. */
  network: boolean
  /** Where the command starts, inside the sandbox. */
  cwd: string
}

/**
 * The user a sandboxed command runs as when goalkeeper runs as root: an ordinary uid in a user namespace
 * of its own, mapped to root outside, so the files root owns (a workspace root checked out) stay writable,
 * while the command holds no capability and cannot get one back by running a program (root in a namespace
 * regains its capabilities at every exec; another uid does not).
 */
export const SANDBOX_UID = 1000

/** The flags that take every privilege away; the probe runs them too, so a bwrap that cannot is no sandbox. */
export function privilegeFlags(uid: number | undefined = process.getuid?.()): string[] {
  // A user namespace of its own, in which no further one can be made (`unshare`, a nested bwrap), and
  // every capability dropped: a command of root cannot remount, mount or open raw sockets.
  const flags = ['--unshare-user', '--disable-userns', '--cap-drop', 'ALL']
  if (uid === 0) flags.push('--uid', String(SANDBOX_UID), '--gid', String(SANDBOX_UID))
  return flags
}

/**
 * The command line that runs `argv` in a bubblewrap sandbox: the host's file system mounted read-only, a
 * fresh /dev and a private /tmp, the writable directories bound back read-write (after /tmp, so a
 * workspace under /tmp is still the real one), without network a private /run as well, the read-only
 * exceptions bound over them, the hidden paths last, a user namespace without capabilities, a new PID
 * namespace with its own /proc (host processes and their environments are invisible), no network unless
 * allowed, and the sandbox killed with the process that started it. The environment is the caller's
 * (already scrubbed of secrets): bwrap passes it through.
 */
export function sandboxedCommand(policy: SandboxPolicy, argv: readonly string[]): { file: string; args: string[] } {
  // A workspace at / is bound first, as the base: bound after /dev, /proc and /tmp it would cover them
  // with the host's (and the host's /proc shows goalkeeper's environment).
  const rootWritable = policy.writable.includes('/')
  const args = [rootWritable ? '--bind' : '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp']
  if (rootWritable) args.push('--ro-bind', '/sys', '/sys')
  // Unix sockets of host daemons (docker, dbus) live here, and a read-only mount does not stop a connect():
  // without network they are hidden too. With network, name resolution may need them (systemd-resolved).
  if (!policy.network) args.push('--tmpfs', '/run')
  for (const dir of policy.writable) if (dir !== '/') args.push('--bind', dir, dir)
  for (const dir of policy.readOnly) args.push('--ro-bind', dir, dir)
  for (const { path, directory } of policy.hidden ?? []) {
    if (directory) args.push('--tmpfs', path, '--remount-ro', path)
    else args.push('--ro-bind', '/dev/null', path)
  }
  args.push(...privilegeFlags(), '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try')
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
