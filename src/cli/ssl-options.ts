import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { SslOptions } from '../ovsdb/transport';
import { CliUsageError } from './errors';

export interface SslFlags {
  privateKey?: string;
  certificate?: string;
  caCert?: string;
}

/** The ssl: remote credentials, named as ovn-nbctl and ovs-vsctl name them. */
export function addSslOptions(command: Command): Command {
  return command
    .option('--private-key <file>', 'PEM private key for ssl: remotes (as ovn-nbctl -p)')
    .option('--certificate <file>', 'PEM certificate for ssl: remotes (as ovn-nbctl -c)')
    .option('--ca-cert <file>', "PEM CA certificate that must have signed the server's (as ovn-nbctl -C)");
}

function read(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new CliUsageError(`${flag} ${path}: ${(error as Error).message}`);
  }
}

export function sslOptions(flags: SslFlags): SslOptions | undefined {
  const given = [flags.privateKey, flags.certificate, flags.caCert].filter((value) => value !== undefined).length;
  if (given === 0) return undefined;
  if (flags.privateKey === undefined || flags.certificate === undefined || flags.caCert === undefined) {
    throw new CliUsageError('ssl: remotes need all three of --private-key, --certificate and --ca-cert');
  }
  return {
    key: read('--private-key', flags.privateKey),
    cert: read('--certificate', flags.certificate),
    ca: read('--ca-cert', flags.caCert),
  };
}
