import { spawn } from 'node:child_process';
import path from 'node:path';

/** The built package, for scripts run in a child process. */
export const dist = path.join(__dirname, '..', '..', 'dist');

export interface ChildResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a CommonJS script in a child node process: for behaviour that ends or aborts a process
 * (uncaught exceptions, fatal errors), which must not take the test runner down with it.
 */
export function runNodeScript(script: string, env: Record<string, string> = {}, limitMs = 60_000): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the child process did not finish within ${limitMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, limitMs);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}
