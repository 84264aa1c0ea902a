import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../support/ovsdb-server';

/** A real Prometheus server (Debian's prometheus) on a loopback port, scraping `target` every second. */
export interface PrometheusServer {
  /** The value of an instant query's first series, or undefined while it has none. */
  query(expression: string): Promise<number | undefined>;
  /** Every series of an instant query: labels and value. */
  series(expression: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(target: string): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'ovnps-prometheus-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: ovn-psample\n    static_configs:\n      - targets: ['${target}']\n`,
  );
  const child: ChildProcess = spawn(
    'setpriv',
    [
      '--pdeathsig',
      'KILL',
      'prometheus',
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await fetch(`${base}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`prometheus did not start:\n${log.slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const series = async (expression: string): Promise<{ metric: Record<string, string>; value: number }[]> => {
    const response = (await (await fetch(`${base}/api/v1/query?query=${encodeURIComponent(expression)}`)).json()) as {
      data: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    return response.data.result.map((result) => ({ metric: result.metric, value: Number(result.value[1]) }));
  };
  return {
    series,
    async query(expression) {
      return (await series(expression))[0]?.value;
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
