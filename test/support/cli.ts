import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

// The one way tests run the built ovn-psample CLI (host and lab): start it, await its JSON log
// records, read what it printed.

/** The built CLI's entry point, for a test that must start it itself (in a terminal). */
export const cliMain = path.join(__dirname, '..', '..', 'dist', 'cli', 'main.js');

export type LogRecord = Record<string, unknown>;

/** A running ovn-psample whose JSON log lines (stderr) can be awaited and whose process can be signalled. */
export interface CliProcess {
  readonly child: ChildProcess;
  /**
   * Resolves once a log record matching `test` was written, with that record; rejects after
   * `timeoutMs`, or once the process has exited and closed its stderr without writing one.
   */
  logged(test: (record: LogRecord) => boolean, what: string, timeoutMs?: number): Promise<LogRecord>;
  /** Resolves when the psample socket is open (the "listening" record naming its multicast group). */
  readonly listening: Promise<LogRecord>;
  /** Resolves with the exit code once the process has exited and its stdout and stderr are read. */
  readonly exited: Promise<number | null>;
  /** Sends the process `signal`; resolves with its exit code. */
  stop(signal: NodeJS.Signals): Promise<number | null>;
  stdout(): string;
  /** What stdout received, as bytes (with binaryStdout). */
  stdoutBytes(): Buffer;
  stderr(): string;
  /** The JSON log records so far. */
  records(): LogRecord[];
}

export interface StartCliOptions {
  env?: NodeJS.ProcessEnv;
  binaryStdout?: boolean;
  /**
   * Run it as pid 1 of a new pid namespace, as in a pod without hostPID (util-linux unshare; the
   * CLI dies with it). `child` is then unshare: signal the CLI itself through `cliPid()`.
   */
  pidNamespace?: boolean;
  /**
   * A command that runs the CLI as its last arguments, each part exec-ing the next (`ip netns exec
   * NS setpriv …`): `child.pid` is then the CLI's.
   */
  wrapper?: readonly string[];
}

/** A log record test: its message matches `pattern`. */
export const message =
  (pattern: RegExp) =>
  (record: LogRecord): boolean =>
    pattern.test(String(record.msg));

/** The pid (in this test's namespace) of the CLI that `startCli({ pidNamespace: true })` runs under unshare. */
export function cliPid(run: CliProcess): number {
  const children = readFileSync(`/proc/${run.child.pid}/task/${run.child.pid}/children`, 'latin1').trim();
  return Number(children.split(' ')[0]);
}

export function startCli(args: readonly string[], options: StartCliOptions = {}): CliProcess {
  const command = [
    ...(options.wrapper ?? []),
    ...(options.pidNamespace === true ? ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL'] : []),
    process.execPath,
    cliMain,
    ...args,
  ];
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
  let stdout = '';
  let stderr = '';
  const records: LogRecord[] = [];
  const waiters = new Set<() => void>();
  const chunks: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => {
    if (options.binaryStdout === true) chunks.push(d);
    else stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    const before = stderr.lastIndexOf('\n') + 1;
    stderr += d.toString();
    for (const line of stderr.slice(before, stderr.lastIndexOf('\n') + 1).split('\n')) {
      if (line.startsWith('{')) records.push(JSON.parse(line) as LogRecord);
    }
    for (const wake of waiters) wake();
  });
  // 'close', not 'exit': by then stdout and stderr have been read to their end.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const logged = (test: (record: LogRecord) => boolean, what: string, timeoutMs = 30_000): Promise<LogRecord> =>
    new Promise((resolve, reject) => {
      const settle = (error?: Error): void => {
        clearTimeout(timer);
        waiters.delete(check);
        if (error === undefined) resolve(records.find(test)!);
        else reject(error);
      };
      const check = (): void => {
        if (records.some(test)) settle();
      };
      const timer = setTimeout(
        () => settle(new Error(`ovn-psample did not log ${what} within ${timeoutMs} ms; stderr:\n${stderr}`)),
        timeoutMs,
      );
      waiters.add(check);
      void exited.then((code) => {
        check();
        if (waiters.has(check)) settle(new Error(`ovn-psample exited (${code}) without logging ${what}; stderr:\n${stderr}`));
      });
      check();
    });
  // 60 s: node starts slowly in the lab's emulated guest.
  const listening = logged(
    (record) => String(record.msg).startsWith('listening') && 'multicastGroup' in record,
    'the listening record',
    60_000,
  );
  // Awaited by the tests that need it; a run that never listens must not also fail as unhandled.
  listening.catch(() => undefined);
  return {
    child,
    logged,
    listening,
    exited,
    stop: (signal) => {
      child.kill(signal);
      return exited;
    },
    stdout: () => stdout,
    stdoutBytes: () => Buffer.concat(chunks),
    stderr: () => stderr,
    records: () => records,
  };
}

/** Runs a CLI command that ends by itself (decode), blocking: exit code, stdout and stderr. */
export function runCliSync(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const { status, stdout, stderr } = spawnSync(process.execPath, [cliMain, ...args], { encoding: 'utf8' });
  return { status, stdout, stderr };
}

/** What a CLI command that ends by itself prints; it failing throws with its stderr. */
export function cliOutput(args: readonly string[]): string {
  const { status, stdout, stderr } = runCliSync(args);
  if (status !== 0) throw new Error(`ovn-psample ${args.join(' ')} exited ${status}: ${stderr}`);
  return stdout;
}

/** Runs the CLI to its end: exit code, stdout and stderr. */
export async function runCli(
  args: readonly string[],
  options: StartCliOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startCli(args, options);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/**
 * The arguments of `command` reading the samples a test injects into usersock group
 * `usersockGroup` of `netns` (test/support/netns), logging JSON records.
 */
export function injectedSourceArgs(
  command: 'listen' | 'watch' | 'top',
  netns: string,
  usersockGroup: number,
  args: readonly string[],
): string[] {
  return [command, '--netns', netns, '--source', `usersock:34:${usersockGroup}`, '--log-format', 'json', ...args];
}

/**
 * Every line of what a run printed (`--format json`), each parsed as JSON; a line that is not JSON
 * (a blank one too) throws, naming it.
 */
export function jsonLines<T = LogRecord>(printed: string): T[] {
  const text = printed.trimEnd();
  if (text === '') return [];
  return text.split('\n').map((line) => {
    try {
      return JSON.parse(line) as T;
    } catch (error) {
      throw new Error(`a printed line is not JSON: ${line}`, { cause: error });
    }
  });
}
