import { hex32 } from './cookie';
import type { OvnDatapathInfo, OvnSampleEvent } from './event';

function datapathText(datapath: OvnDatapathInfo): string {
  const parts = [`key ${datapath.key}`];
  if (datapath.switch !== undefined) {
    parts.push(`switch ${datapath.switch}`);
  }
  if (datapath.router !== undefined) {
    parts.push(`router ${datapath.router}`);
  }
  if (datapath.network !== undefined) {
    parts.push(`network ${datapath.network}`);
  }
  if (datapath.topology !== undefined) {
    parts.push(`topology ${datapath.topology}`);
  }
  if (datapath.role !== undefined) {
    parts.push(`role ${datapath.role}`);
  }
  if (datapath.key === 0) {
    parts.push("(no logical datapath has key 0: the key of ovn-controller's own drops)");
  } else if (datapath.switch === undefined && datapath.router === undefined) {
    parts.push('(unresolved: no Datapath_Binding with this key, or no southbound database)');
  }
  return parts.join(', ');
}

/**
 * A human-readable rendering: first ovnkube-observ's "OVN-K message:" line (or why there is
 * none), then one indented line per known detail.
 */
export function formatOvnEvent(event: OvnSampleEvent): string {
  const lines = [
    event.status === 'decoded' ? `OVN-K message: ${event.message}` : `${event.status} (${event.reason ?? 'unknown'}): ${event.message}`,
  ];
  const app = event.app === undefined ? `app ${event.appId}` : `${event.app} (app ${event.appId})`;
  lines.push(
    `  sample: ${app}, obs_domain_id 0x${hex32(event.obsDomainId)}, obs_point_id ${event.obsPointId} (0x${hex32(event.obsPointId)})`,
  );
  lines.push(`  datapath: ${datapathText(event.datapath)}`);
  if (event.owner !== undefined) {
    const { type, namespace, name, direction, id } = event.owner;
    const who = [namespace, name].filter((part) => part !== undefined).join('/');
    lines.push(
      `  owner: ${type}${who === '' ? '' : ` ${who}`}${direction === undefined ? '' : ` ${direction}`}${id === undefined ? '' : ` (id ${id})`}`,
    );
  }
  if (event.acl !== undefined) {
    const { uuid, name, direction, priority, tier, action, match, label } = event.acl;
    const labelText = label === 0 ? '' : ` label ${label}`;
    lines.push(
      `  acl: ${uuid}${name === undefined ? '' : ` "${name}"`} ${direction} priority ${priority} tier ${tier}${labelText} ${action}: ${match}`,
    );
  }
  for (const uuid of event.otherAcls ?? []) {
    lines.push(`  also acl: ${uuid}`);
  }
  if (event.flow !== undefined) {
    const { uuid, stage, source, pipeline, table, priority, match, actions, hint } = event.flow;
    const text = match === undefined || actions === undefined ? '' : `: ${match} => ${actions}`;
    lines.push(
      `  flow: ${uuid} ${stage ?? '?'}${source === undefined ? '' : ` (${source})`} ${pipeline} table ${table} priority ${priority}${text}`,
    );
    if (hint !== undefined) {
      lines.push(
        `  stage-hint: ${hint.hint}${hint.table === undefined ? ' (no monitored northbound row)' : ` ${hint.table} ${hint.name ?? hint.uuid ?? ''}`}`,
      );
    }
  }
  if (event.flow?.description !== undefined) {
    lines.push(`  flow description: ${event.flow.description}`);
  }
  if (event.openflowTable !== undefined) {
    const { table, name, release, description } = event.openflowTable;
    const named = name === undefined ? '' : ` ${name}`;
    const from = release === undefined ? ' (OVN release unknown)' : ` (OVN ${release})`;
    lines.push(`  openflow table: ${table}${named}${from}${description === undefined ? '' : `: ${description}`}`);
  }
  if (event.previous !== undefined) {
    lines.push(`  previously: ${event.previous.message} (acl ${event.previous.acl.uuid}: ${event.previous.acl.match})`);
  }
  return lines.join('\n');
}
