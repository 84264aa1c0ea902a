import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const cli = path.join(__dirname, '..', '..', '..', 'dist', 'cli', 'main.js');

/** A running ovn-psample whose JSON log lines (stderr) can be awaited and whose process can be signalled. */
export interface CliProcess {
  readonly child: ChildProcess;
  /** Resolves once a log record matching `test` was written, with that record. */
  logged(test: (record: Record<string, unknown>) => boolean, what: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves when the socket is open ("listening" record). */
  readonly listening: Promise<Record<string, unknown>>;
  readonly exited: Promise<number | null>;
  stdout(): string;
  /** What stdout received, as bytes (with binaryStdout). */
  stdoutBytes(): Buffer;
  stderr(): string;
  /** The JSON log records so far. */
  records(): Record<string, unknown>[];
}

export interface StartCliOptions {
  env?: NodeJS.ProcessEnv;
  binaryStdout?: boolean;
  /**
   * Run it as pid 1 of a new pid namespace, as in a pod without hostPID (util-linux unshare; the
   * CLI dies with it). `child` is then unshare: signal the CLI itself through `cliPid()`.
   */
  pidNamespace?: boolean;
}

/** The pid (in this test's namespace) of the CLI that `startCli({ pidNamespace: true })` runs under unshare. */
export function cliPid(run: CliProcess): number {
  const children = readFileSync(`/proc/${run.child.pid}/task/${run.child.pid}/children`, 'latin1').trim();
  return Number(children.split(' ')[0]);
}

export function startCli(args: readonly string[], options: StartCliOptions = {}): CliProcess {
  const command =
    options.pidNamespace === true
      ? ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL', process.execPath, cli, ...args]
      : [process.execPath, cli, ...args];
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
  let stdout = '';
  let stderr = '';
  const records: Record<string, unknown>[] = [];
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
      if (line.startsWith('{')) records.push(JSON.parse(line) as Record<string, unknown>);
    }
    for (const wake of waiters) wake();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const logged = (test: (record: Record<string, unknown>) => boolean, what: string, timeoutMs = 30_000): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = records.find(test);
        if (found !== undefined) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`ovn-psample did not log ${what} within ${timeoutMs} ms; stderr:\n${stderr}`));
      }, timeoutMs);
      waiters.add(check);
      void exited.then(() => setTimeout(check, 0));
      check();
    });
  const listening = logged((record) => String(record.msg).startsWith('listening') && 'multicastGroup' in record, 'the listening record');
  // Awaited by the tests that need it; a run that never listens must not also fail as unhandled.
  listening.catch(() => undefined);
  return {
    child,
    logged,
    listening,
    exited,
    stdout: () => stdout,
    stdoutBytes: () => Buffer.concat(chunks),
    stderr: () => stderr,
    records: () => records,
  };
}
