import { expect, it } from 'vitest';
import { addon } from '../../src/native/binding';

// The TypeScript wrappers never call a closed native object; a caller of the addon itself gets
// a typed error, not a crash.
it('a native flow table or watch-lines object used after close() throws CLOSED, naming its class', () => {
  const table = new addon.NativeFlowTable({ groupWindowMs: 50, maxFlows: 10, bySourcePort: false });
  table.close();
  expect(() => table.drain(true, true, new Float64Array(addon.NativeFlowTable.statSlots))).toThrow(
    expect.objectContaining({ code: 'CLOSED', message: 'NativeFlowTable: used after close()' }),
  );
  const lines = new addon.NativeWatchLines({ groupWindowMs: 50, bySourcePort: false, format: 'json', color: false });
  lines.close();
  expect(() => lines.release(0, true)).toThrow(
    expect.objectContaining({ code: 'CLOSED', message: 'NativeWatchLines: used after close()' }),
  );
});
