import path from 'node:path';
import nodeGypBuild from 'node-gyp-build';

import type { PsampleStats } from '../psample/types';

/** Shapes of the C++ addon (native/addon.cc); only src/psample talks to it. */
export interface NativeReaderOptions {
  protocol: 'kernel' | 'generic' | 'usersock';
  familyId?: number;
  groupId?: number;
  netns?: string;
  groups?: number[];
  config: boolean;
  listenAllNsid: boolean;
  receiveBufferBytes: number;
  queueCapacity: number;
}

export interface NativeReaderInfo {
  familyId: number;
  groupId: number;
  kernelFilter: boolean;
  receiveBufferBytes: number;
}

/** The public counters plus the errno the reader thread stopped on (0 while healthy). */
export type NativeReaderStats = PsampleStats & { failureErrno: number };

/** Flattened batches: [records, payload, count, records, payload, count, ...]. */
export type NativeBatches = Array<ArrayBuffer | number>;

export interface NativeReader {
  /** Takes queued batches; writes [kernel drops, queue drops, failure errno] into `counters`. */
  take(counters: Float64Array): NativeBatches;
  stats(): NativeReaderStats;
  info(): NativeReaderInfo;
  close(): void;
  ref(): void;
  unref(): void;
}

export interface NativeInjector {
  send(bytes: Uint8Array): void;
  close(): void;
}

export interface NativeDecodeCounters {
  malformed: number;
  unknownAttributes: number;
  foreign: number;
  swappedLayout: number;
  controlMessages: number;
}

interface Addon {
  NativeReader: new (options: NativeReaderOptions, onReadable: () => void) => NativeReader;
  NativeInjector: new (options: { protocol: 'generic' | 'usersock'; groupId: number; netns?: string }) => NativeInjector;
  decode(bytes: Uint8Array, familyId: number): [ArrayBuffer, ArrayBuffer, number, NativeDecodeCounters];
}

// src/native and dist/native both sit two levels below the package root, where node-gyp-build
// finds prebuilds/ (installed packages) or build/Release (source checkouts).
export const addon: Addon = nodeGypBuild(path.join(__dirname, '..', '..')) as Addon;
