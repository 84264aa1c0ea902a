import { afterEach } from 'vitest';
import { openPsample, type OpenPsampleOptions, type PsampleSocket } from '../../../src/index';

/** openPsample for a test file: every socket it opens is closed after each test, passed or failed. */
export function openPsampleForEachTest(): (options?: OpenPsampleOptions) => PsampleSocket {
  const opened: PsampleSocket[] = [];
  afterEach(() => {
    for (const socket of opened.splice(0)) socket.close();
  });
  return (options) => {
    const socket = openPsample(options);
    opened.push(socket);
    return socket;
  };
}
