import { describe, expect, it } from 'vitest';
import { AGGREGATE_DELIVERY_INTERVAL_MS, watchDeliveryInterval } from '../../src/cli/options';

describe("watch's --delivery-interval", () => {
  const defaults = { deliveryInterval: '20', groupWindow: '50' };

  it('is the default (20 ms) for a watch that writes a line per packet', () => {
    expect(watchDeliveryInterval(defaults, false)).toBe('20');
  });

  it('is longer with --aggregate, which writes nothing per packet, and stays below the group window', () => {
    expect(watchDeliveryInterval({ ...defaults, aggregate: '60' }, false)).toBe(String(AGGREGATE_DELIVERY_INTERVAL_MS));
    expect(AGGREGATE_DELIVERY_INTERVAL_MS).toBeLessThan(50);
    // A window that leaves no room for it keeps the default, which the window check then judges as before.
    expect(watchDeliveryInterval({ ...defaults, aggregate: '60', groupWindow: '40' }, false)).toBe('20');
    expect(watchDeliveryInterval({ ...defaults, aggregate: '60', groupWindow: 'soon' }, false)).toBe('20');
  });

  it('is what the user gave, --aggregate or not', () => {
    expect(watchDeliveryInterval({ ...defaults, aggregate: '60', deliveryInterval: '5' }, true)).toBe('5');
    expect(watchDeliveryInterval({ ...defaults, deliveryInterval: '30' }, true)).toBe('30');
  });
});
