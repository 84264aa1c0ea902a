import type { Logger } from 'pino';

/**
 * Runs a long-lived command until it calls stop(), --duration passes, or SIGINT/SIGTERM comes;
 * then runs its cleanup. A second signal during the cleanup exits at once. stop(error) makes the
 * command fail with that error after cleaning up.
 */
export async function runUntilStopped(
  log: Logger,
  seconds: number | undefined,
  start: (stop: (error?: Error) => void) => Promise<() => Promise<void>>,
): Promise<void> {
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
  let failure: Error | undefined;
  const stop = (error?: Error): void => {
    failure ??= error;
    resolveStopped();
  };
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (++signals > 1) {
      log.warn(`${signal} again: exiting without cleaning up`);
      process.exit(130);
    }
    log.info({ signal }, `${signal}: stopping`);
    stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const timer = seconds === undefined ? undefined : setTimeout(() => stop(), seconds * 1000);
  try {
    // A stop while starting waits for the start to finish: what it made (a collector set) is then undone.
    const cleanup = await start(stop);
    await stopped;
    await cleanup();
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (failure !== undefined) throw failure;
}
