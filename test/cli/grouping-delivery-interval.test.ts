import { describe, expect, it } from 'vitest';
import { GROUPING_DELIVERY_INTERVAL_MS, groupingDeliveryInterval, SHORT_GROUPING_DELIVERY_INTERVAL_MS } from '../../src/cli/options';
import { DEFAULT_GROUP_WINDOW_MS } from '../../src/events/event-assembler';

describe("watch's and top's --delivery-interval", () => {
  const defaults = { deliveryInterval: String(GROUPING_DELIVERY_INTERVAL_MS), groupWindow: String(DEFAULT_GROUP_WINDOW_MS) };

  it('is the default (40 ms), below the default group window, --aggregate or not', () => {
    expect(groupingDeliveryInterval(defaults, false)).toBe('40');
    expect(GROUPING_DELIVERY_INTERVAL_MS).toBeLessThan(DEFAULT_GROUP_WINDOW_MS);
  });

  it('is the shorter one when --group-window leaves no room for the default, which the window check then judges', () => {
    expect(groupingDeliveryInterval({ ...defaults, groupWindow: '40' }, false)).toBe(String(SHORT_GROUPING_DELIVERY_INTERVAL_MS));
    expect(groupingDeliveryInterval({ ...defaults, groupWindow: '30' }, false)).toBe('20');
    expect(groupingDeliveryInterval({ ...defaults, groupWindow: '41' }, false)).toBe('40');
    // Not a number: left to the window check, which says what is wrong with it.
    expect(groupingDeliveryInterval({ ...defaults, groupWindow: 'soon' }, false)).toBe('40');
  });

  it('is what the user gave', () => {
    expect(groupingDeliveryInterval({ ...defaults, deliveryInterval: '5' }, true)).toBe('5');
    expect(groupingDeliveryInterval({ ...defaults, deliveryInterval: '30', groupWindow: '30' }, true)).toBe('30');
  });
});
