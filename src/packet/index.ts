export { decodePacket } from './decode.js';
export { describePacket } from './describe.js';
export type * from './types.js';
