// The stream-resilience settings that apply to one target: its deadlines (the connection's own
// `timeouts.*` first, then the first matching row of `streams.modelDeadlines`, then the setting),
// each with where it came from, plus the hold-back budget, the throughput watchdog and the recovery
// switches. Resolved once per (connection record, model, settings snapshot).
import type { StreamWatchdog } from '../../../shared/model';
import type { ModelDeadline, SettingKey } from '../../../shared/settings';
import { compilePattern, type CompiledPattern } from '../routing/combos/modelPattern';
import type { Target } from '../routing/target';
import { effectiveFor, type ResolvedSettings } from '../settings/resolve';
import type { ConnectionRecord } from '../store/connectionsRepo';
import type { WatchLimits } from '../streams/watchdogs';

export interface StreamPolicy {
  limits: WatchLimits;
  holdBackBytes: number;
  /** R-TW-10: reopen a stream a watchdog abandoned before commit once on the same connection. */
  reopen: boolean;
  /** Continue a broken committed answer on another target. */
  midstream: boolean;
}

const DEADLINES: { key: SettingKey; field: keyof Omit<ModelDeadline, 'model'>; watchdog: StreamWatchdog }[] = [
  { key: 'streams.firstOutputTimeoutMs', field: 'firstOutputMs', watchdog: 'first_output' },
  { key: 'streams.contentStallTimeoutMs', field: 'contentStallMs', watchdog: 'content_stall' },
  { key: 'streams.attemptDeadlineMs', field: 'attemptDeadlineMs', watchdog: 'attempt_deadline' },
];

const SOURCE_WORDS: Record<string, string> = {
  default: 'default',
  env: 'set by the environment',
  persisted: 'saved setting',
  connection: 'connection setting',
};

interface Compiled {
  snap: ResolvedSettings;
  rows: { row: ModelDeadline; pattern: CompiledPattern }[];
}

let compiled: Compiled | null = null;

function modelRows(snap: ResolvedSettings): Compiled['rows'] {
  if (compiled?.snap === snap) return compiled.rows;
  const rows = snap.values['streams.modelDeadlines'].map((row) => ({ row, pattern: compilePattern(row.model) }));
  compiled = { snap, rows };
  return rows;
}

/** The first row whose pattern matches the model id, with or without its provider prefix. */
function modelRow(snap: ResolvedSettings, model: string): ModelDeadline | null {
  const bare = model.slice(model.lastIndexOf('/') + 1);
  for (const { row, pattern } of modelRows(snap)) if (pattern.test(model) || pattern.test(bare)) return row;
  return null;
}

function resolve(snap: ResolvedSettings, conn: ConnectionRecord, model: string): StreamPolicy {
  const v = snap.values;
  const row = modelRow(snap, model);
  const ms: Record<StreamWatchdog, number> = { first_output: 0, content_stall: 0, attempt_deadline: 0, throughput: 0 };
  const sources: Partial<Record<StreamWatchdog, string>> = {};
  for (const d of DEADLINES) {
    const eff = effectiveFor(snap, d.key, conn);
    const fromRow = row?.[d.field];
    if (eff.source !== 'connection' && fromRow !== undefined) {
      ms[d.watchdog] = fromRow;
      sources[d.watchdog] = `model setting for ${row!.model}`;
    } else {
      ms[d.watchdog] = eff.value as number;
      sources[d.watchdog] = SOURCE_WORDS[eff.source] ?? eff.source;
    }
  }
  return {
    limits: {
      firstOutputMs: ms.first_output,
      contentStallMs: ms.content_stall,
      attemptDeadlineMs: ms.attempt_deadline,
      throughput: v['streamRecovery.throughputWatchdog.enabled']
        ? {
            warmupMs: v['streamRecovery.throughputWatchdog.warmupMs'],
            windowMs: v['streamRecovery.throughputWatchdog.windowMs'],
            minBytesPerSecond: v['streamRecovery.throughputWatchdog.minBytesPerSecond'],
            minMeasurableBytes: v['streamRecovery.throughputWatchdog.minMeasurableBytes'],
          }
        : null,
      sources,
    },
    holdBackBytes: v['streams.holdBackBytes'],
    reopen: v['streamRecovery.enabled'],
    midstream: v['streamRecovery.midstream.enabled'],
  };
}

const cache = new WeakMap<ConnectionRecord, { snap: ResolvedSettings; byModel: Map<string, StreamPolicy> }>();

export function streamPolicyFor(snap: ResolvedSettings, target: Target): StreamPolicy {
  let c = cache.get(target.conn);
  if (!c || c.snap !== snap) cache.set(target.conn, (c = { snap, byModel: new Map() }));
  let p = c.byModel.get(target.model);
  if (!p) c.byModel.set(target.model, (p = resolve(snap, target.conn, target.model)));
  return p;
}
