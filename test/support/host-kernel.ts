import { execFileSync } from 'node:child_process';

/**
 * Whether this machine's kernel registers the psample generic-netlink family: asked of the kernel
 * with iproute2's `genl`, not with the code under test. Tests of the "no psample here" path skip
 * where it is present.
 */
export const hostHasPsample = /\bpsample\b/.test(execFileSync('genl', ['ctrl', 'list'], { encoding: 'utf8' }));
