import { spawn } from 'node:child_process';
import path from 'node:path';

const cli = path.join(__dirname, '..', '..', 'dist', 'cli', 'main.js');

export interface CliRun {
  /** Resolves once `listen` has joined its group (its "listening" line on stderr). */
  listening: Promise<void>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Sends the process a signal. */
  kill(signal: NodeJS.Signals): void;
  /** Stops reading its stdout (the pipe fills, then the CLI's writes wait or queue), or reads on. */
  readStdout(reading: boolean): void;
}

/** Runs the built ovn-psample CLI and collects what it prints. */
export function runCli(args: readonly string[]): CliRun {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const listening = new Promise<void>((resolve) =>
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes('listening')) resolve();
    }),
  );
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return {
    listening,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    kill: (signal) => child.kill(signal),
    readStdout: (reading) => (reading ? child.stdout.resume() : child.stdout.pause()),
  };
}
