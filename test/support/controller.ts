import { endianness } from 'node:os';

// include/uapi/linux/genetlink.h
const GENL_ID_CTRL = 0x10;
export const CTRL_CMD_NEWFAMILY = 1;
export const CTRL_CMD_DELFAMILY = 2;
const CTRL_ATTR_FAMILY_ID = 1;
const CTRL_ATTR_FAMILY_NAME = 2;
const CTRL_ATTR_VERSION = 3;
const CTRL_ATTR_MCAST_GROUPS = 7;
const CTRL_ATTR_MCAST_GRP_NAME = 1;
const CTRL_ATTR_MCAST_GRP_ID = 2;
const NLA_F_NESTED = 0x8000;

// Netlink is in host byte order.
const littleEndian = endianness() === 'LE';

function attribute(type: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array((4 + payload.byteLength + 3) & ~3);
  const view = new DataView(out.buffer);
  view.setUint16(0, 4 + payload.byteLength, littleEndian);
  view.setUint16(2, type, littleEndian);
  out.set(payload, 4);
  return out;
}

function number(bytes: 2 | 4, value: number): Uint8Array {
  const out = new Uint8Array(bytes);
  if (bytes === 2) new DataView(out.buffer).setUint16(0, value, littleEndian);
  else new DataView(out.buffer).setUint32(0, value, littleEndian);
  return out;
}

const text = (value: string): Uint8Array => Buffer.from(`${value}\0`);

export interface ControllerFamily {
  name: string;
  id: number;
  /** Multicast group name -> id. */
  groups: Record<string, number>;
}

/**
 * A generic-netlink controller notification as the kernel multicasts it on nlctrl's "notify"
 * group (ctrl_fill_info's attributes, including CTRL_ATTR_VERSION: attribute 3, like psample's
 * SAMPLE_GROUP, which a group filter must not mistake for one).
 */
export function controllerMessage(command: number, family: ControllerFamily): Uint8Array {
  const groups = Object.entries(family.groups).map(([name, id], index) =>
    attribute(
      (index + 1) | NLA_F_NESTED,
      Buffer.concat([attribute(CTRL_ATTR_MCAST_GRP_ID, number(4, id)), attribute(CTRL_ATTR_MCAST_GRP_NAME, text(name))]),
    ),
  );
  const body = Buffer.concat([
    attribute(CTRL_ATTR_FAMILY_ID, number(2, family.id)),
    attribute(CTRL_ATTR_FAMILY_NAME, text(family.name)),
    attribute(CTRL_ATTR_VERSION, number(4, 1)),
    attribute(CTRL_ATTR_MCAST_GROUPS | NLA_F_NESTED, Buffer.concat(groups)),
  ]);
  const message = new Uint8Array(20 + body.byteLength);
  const view = new DataView(message.buffer);
  view.setUint32(0, message.byteLength, littleEndian);
  view.setUint16(4, GENL_ID_CTRL, littleEndian);
  message[16] = command;
  message[17] = 2;
  message.set(body, 20);
  return message;
}
