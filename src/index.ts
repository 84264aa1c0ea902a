export * from './errors';
export * from './psample/errors';
export type * from './psample/types';
export { openPsample, openFakePsample, PsampleSocket, type PsampleSocketEvents } from './psample/socket';
export { FakePsampleReader } from './psample/fake-reader';
export { dropPrivileges } from './psample/privileges';
export { PsampleSample } from './psample/sample';
export { PsampleBatch } from './psample/batch';
export { decodePsample, type DecodePsampleOptions } from './psample/decode';
export * from './ipfix/errors';
export type * from './ipfix/types';
export { openIpfix, IpfixSource, type IpfixSourceEvents, type IpfixDropEvent, type IpfixDropKind } from './ipfix/source';
export { IpfixBatch } from './ipfix/batch';
export { IPFIX_STATS, type IpfixStats, type IpfixStatName } from './ipfix/stats';
export { DEFAULT_IPFIX_PORT, DEFAULT_IPFIX_ADDRESS, type OpenIpfixOptions } from './ipfix/options';
export { DEFAULT_EXPORTERS as DEFAULT_IPFIX_EXPORTERS } from './ipfix/exporter-allow-list';
export { decodeIpfixDatagrams, type IpfixDatagram, type DecodedIpfix } from './ipfix/decode';
export { CaptureFileError } from './capture/errors';
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
export { OvsdbClient, type OvsdbClientOptions, type OvsdbStatus, type OvsdbClientEvents, type OvsdbClientStats } from './ovsdb/client';
export { TableCache, type CacheSelection, type CacheStats, type ApplyOptions, type TableCacheEvents } from './ovsdb/cache';
export type { TableView } from './ovsdb/table-store';
export type { Row, Value } from './ovsdb/row';
export {
  parseSchema,
  loadSchemaFile,
  type DatabaseSchema,
  type TableSchema,
  type ColumnSchema,
  type ColumnType,
  type ColumnKind,
  type BaseType,
  type AtomicType,
  type Atom,
} from './ovsdb/schema';
export { parseRemotes, formatRemote, type Remote } from './ovsdb/remote';
export { MONITOR_METHODS, type MonitorMethod, type MonitorSyncResult } from './ovsdb/monitor';
export type { SslOptions } from './ovsdb/transport';
export type { BackoffOptions } from './ovsdb/backoff';
export {
  OvnSampleDecoder,
  NORTHBOUND_DATABASE,
  SOUTHBOUND_DATABASE,
  type OvnDatabase,
  type OvnSampleDecoderOptions,
  type OvnSampleDecoderCaches,
  type OvnSampleDecoderEvents,
} from './ovn/decoder';
export type * from './ovn/event';
export type { OvnDecoderStats } from './ovn/decode-stats';
export { OwnerType, policyOwner, aclMessage, actionVerb, type PolicyOwner } from './ovn/owner';
export { aclSampleMetadata, type AclSampleIdentity } from './ovn/sample-id';
export { northboundSelection, southboundSelection } from './ovn/selection';
/** Typed rows of the OVN databases, generated from OVN 25.03's schemas: `cache.table<Northbound.ACL>('ACL')`. */
export type * as Northbound from './ovn/northbound.generated';
export type * as Southbound from './ovn/southbound.generated';
export { formatOvnEvent } from './ovn/event-text';
export { parseCookieHex, formatCookieHex } from './ovn/cookie';
export * from './ovs/errors';
export { LocalOvs, DEFAULT_OVS_REMOTE, type LocalOvsOptions } from './ovs/local-ovs';
export { OPEN_VSWITCH_DATABASE, vswitchSelection } from './ovs/selection';
export {
  collectorSets,
  findCollectorSet,
  OVN_KUBERNETES_COLLECTOR_SET_ID,
  DEFAULT_LOCAL_GROUP,
  DEFAULT_BRIDGE,
  type CollectorSetInfo,
} from './ovs/collector-set';
export {
  addCollector,
  releaseCollector,
  removeCollector,
  type CollectorOptions,
  type AddCollectorOptions,
  type CollectorClaim,
  type RemovedCollector,
} from './ovs/collector';
export { CollectorWatch, type CollectorWatchEvents } from './ovs/collector-watch';
export {
  addIpfixCollector,
  releaseIpfixCollector,
  removeIpfixCollector,
  IPFIX_COST_WARNING,
  type AddIpfixCollectorOptions,
  type IpfixCollectorClaim,
  type IpfixRow,
} from './ovs/ipfix-collector';
export { psampleSupport, type PsampleSupport } from './ovs/psample-support';
export { ovsInterfaceName } from './ovs/interfaces';
export { PodDirectory, podSelection } from './ovn/pod-directory';
export { endpointText, type Endpoint, type EndpointKind } from './ovn/endpoint';
export {
  NetworkEventAssembler,
  DEFAULT_GROUP_WINDOW_MS,
  type NetworkEventAssemblerOptions,
  type NetworkEventAssemblerEvents,
} from './events/event-assembler';
export { chainText, type NetworkEvent, type VerdictStep } from './events/network-event';
export { compileFilter, type NetworkEventFilter } from './events/filter';
export { verdictOf, policyLabel, stepText, VERDICTS, type Verdict } from './events/verdict';
export { JsonFormatter, EVENT_JSON_VERSION } from './output/event-json';
export { HumanFormatter } from './output/event-human';
export { ObservFormatter, type ObservOptions } from './output/event-observ';
export { PcapngWriter, pcapngComment } from './output/pcapng';
export {
  OvnPsampleMetrics,
  DEFAULT_MAX_LABEL_VALUES,
  OTHER_LABEL,
  type OvnPsampleMetricsOptions,
  type MetricsSources,
} from './metrics/metrics';
export { TopTable, type TopRow, type TopSort } from './events/top-table';
export { FlowAggregator, DEFAULT_MAX_FLOWS, type Flow, type FlowInterval, type SampledCounts } from './events/flow-aggregator';
export { packetsSampledBy, packetsStoodFor } from './events/event-samples';
export { FlowJsonFormatter, FLOW_JSON_VERSION } from './output/flow-json';
export { OutputFileError } from './output/sink';
