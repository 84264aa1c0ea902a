import { Command } from 'commander';
import { TopTable, type TopSort } from '../../events/top-table';
import { KEYS_HELP, SORT_NAMES, topLines } from '../../output/top-view';
import { defineCommand } from '../command';
import { startPipeline, type Pipeline } from '../event-pipeline';
import { wholeNumber } from '../parse';
import {
  addPipelineOptions,
  DEFAULT_TOP_WINDOW_SECONDS,
  eventPredicate,
  groupingDeliveryInterval,
  pipelineOptions,
  type PipelineFlags,
} from '../options';
import { runUntilStopped } from '../stop';

interface TopFlags extends PipelineFlags {
  window: string;
  once?: boolean;
}

const SORT_KEYS: Readonly<Record<string, TopSort>> = { p: 'rate', l: 'last', v: 'verdict', n: 'namespace' };
const CLEAR = '\u001b[H\u001b[2J';
const HIDE_CURSOR = '\u001b[?25l';
const SHOW_CURSOR = '\u001b[?25h';

function screen(table: TopTable, pipeline: Pipeline, sort: TopSort, limit: number): string {
  const rows = table.snapshot(sort);
  const source = pipeline.sourceStats();
  const packets = rows.reduce((sum, row) => sum + row.packets, 0);
  const { stats } = source;
  const received =
    source.source === 'psample'
      ? `${stats.received} samples received, ${source.stats.kernelDrops + stats.queueDrops} dropped`
      : `${stats.received} IPFIX records received, ${source.stats.sequenceLost + source.stats.templateLost + stats.queueDrops} lost`;
  const header = [
    `ovn-psample top — last ${table.windowSeconds}s, sorted by ${SORT_NAMES[sort]} — ${KEYS_HELP}`,
    `${Math.round(packets)} packets in the window; ${received}, ${stats.malformed} malformed`,
    '',
  ];
  return [...header, ...topLines(rows, Date.now(), Math.max(1, limit - header.length - 1))].join('\n');
}

export function topCommand(): Command {
  const command = new Command('top').description(
    'a live view of the busiest verdicts: (verdict, policy, namespace, source pod → destination pod) with packets/s and last seen',
  );
  const groups = addPipelineOptions(command);
  command
    .option('--window <seconds>', 'sliding window the rates are counted over', String(DEFAULT_TOP_WINDOW_SECONDS))
    .option('--once', 'gather for one window, print one snapshot (no terminal control) and exit: for scripts')
    .addHelpText(
      'after',
      `
Keys: p sort by packets/s, l by last seen, v by verdict, n by namespace; q or Ctrl-C quits.

Examples:
  ovn-psample top --add-ovs-collector
  ovn-psample top --namespace shop --window 30
  ovn-psample top --once --window 5 > snapshot.txt

Exit status: 0 when quit, 1 when something failed, 2 for wrong usage.`,
    );
  return defineCommand(command, async (flags: TopFlags, log) => {
    const windowSeconds = wholeNumber('--window', flags.window, 1, 3600);
    flags.deliveryInterval = groupingDeliveryInterval(flags, command.getOptionValueSource('deliveryInterval') === 'cli');
    const options = pipelineOptions(flags, groups);
    const accept = eventPredicate(flags);
    const table = new TopTable(windowSeconds);
    const once = flags.once === true;
    const interactive = !once && process.stdout.isTTY === true;
    await runUntilStopped(log, once ? windowSeconds : undefined, async (stop) => {
      const pipeline = await startPipeline(options, log);
      pipeline.assembler.on('event', (event) => {
        if (accept(event)) table.add(event);
      });
      pipeline.socket?.on('error', (error) => stop(error));
      pipeline.ipfix?.on('error', (error) => stop(error));
      let sort: TopSort = 'rate';
      const draw = (): void => {
        const rows = interactive ? (process.stdout.rows ?? 24) : Infinity;
        process.stdout.write(`${interactive ? CLEAR : ''}${screen(table, pipeline, sort, rows)}\n`);
      };
      const onKey = (data: Buffer): void => {
        const key = data.toString();
        if (key === 'q' || key === '\u0003') stop();
        else if (SORT_KEYS[key] !== undefined) {
          sort = SORT_KEYS[key];
          draw();
        }
      };
      const timer = once ? undefined : setInterval(draw, 1000);
      const keyboard = !once && process.stdin.isTTY === true;
      if (keyboard) {
        process.stdin.setRawMode(true);
        process.stdin.on('data', onKey);
        process.stdin.resume();
      }
      if (interactive) process.stdout.write(HIDE_CURSOR);
      if (!once) draw();
      return async () => {
        clearInterval(timer);
        if (keyboard) {
          process.stdin.off('data', onKey);
          process.stdin.setRawMode(false);
          process.stdin.pause();
        }
        pipeline.assembler.flush();
        if (once) draw();
        if (interactive) process.stdout.write(SHOW_CURSOR);
        await pipeline.close();
      };
    });
  });
}
