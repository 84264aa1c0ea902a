export { OvnPsampleError } from './errors';
export * from './psample/errors';
export type * from './psample/types';
export { openPsample, PsampleSocket } from './psample/socket';
export { decodePsample, type DecodePsampleOptions } from './psample/decode';
export { encodePsample, DEFAULT_INJECTION_FAMILY_ID } from './psample/encode';
export { createInjector, PsampleInjector, type InjectorOptions } from './psample/injector';
export {
  observationIdsFromCookie as decodeOvsCookie,
  splitObservationDomain as splitOvnObsDomain,
  type ObservationIds,
  type ObservationDomain,
} from './ovn/cookie';
export { decodePacket, describePacket } from './packet/index';
export type * from './packet/types';
