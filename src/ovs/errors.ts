import { OvnPsampleError } from '../errors';

/** The OVS database lacks what local sampling needs (Flow_Sample_Collector_Set.local_group_id: OVS 3.4+). */
export class OvsSchemaUnsupportedError extends OvnPsampleError {
  constructor(message: string) {
    super('OVS_SCHEMA_UNSUPPORTED', message);
  }
}

/** The bridge named with --bridge is not in the OVS database. */
export class OvsBridgeNotFoundError extends OvnPsampleError {
  constructor(message: string) {
    super('OVS_BRIDGE_NOT_FOUND', message);
  }
}

/** The datapath cannot emit psample samples (kernel or OVS too old, or the userspace datapath). */
export class OvsPsampleUnsupportedError extends OvnPsampleError {
  constructor(message: string) {
    super('OVS_PSAMPLE_UNSUPPORTED', message);
  }
}

/** A collector set exists in a form ovn-psample may not use or change (someone else owns it). */
export class OvsCollectorConflictError extends OvnPsampleError {
  constructor(message: string) {
    super('OVS_COLLECTOR_CONFLICT', message);
  }
}

/** No collector set gives samples a psample group, so there is no group to listen on. */
export class OvsCollectorNotFoundError extends OvnPsampleError {
  constructor(message: string) {
    super('OVS_COLLECTOR_NOT_FOUND', message);
  }
}

/** The datapath emits psample samples: an IPFIX exporter would add an upcall per sample and send each one twice. */
export class OvsIpfixNotNeededError extends OvnPsampleError {
  constructor(message: string) {
    super('OVS_IPFIX_NOT_NEEDED', message);
  }
}
