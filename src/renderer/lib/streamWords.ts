// Words for what a streamed attempt did (request log): its figures (time to first output, bytes
// and frames read), the watchdog that ended it, and whether its answer was continued elsewhere or
// it continued an earlier one.
import type { AttemptEntry, StreamWatchdog } from '../../shared/model';
import { formatBytes, formatMs } from './format';

const WATCHDOGS: Record<StreamWatchdog, string> = {
  first_output: 'no model output in time (time to first output)',
  content_stall: 'stalled: no model output for too long (content stall timeout)',
  throughput: 'too slow: text below the minimum rate (throughput watchdog)',
  attempt_deadline: 'ran into the hard attempt deadline',
};

export interface StreamWords {
  /** "first output 1.2 s · 48 KB, 210 frames (200 output)", or null for an attempt that read no stream. */
  figures: string | null;
  watchdog: string | null;
  continuation: string | null;
}

export function describeStream(a: AttemptEntry, next?: AttemptEntry): StreamWords {
  const parts: string[] = [];
  if (a.firstOutputMs !== undefined && a.firstOutputMs !== null) parts.push(`first output ${formatMs(a.firstOutputMs)}`);
  else if (a.frames) parts.push('no model output');
  if (a.bytes) parts.push(`${formatBytes(a.bytes)}, ${a.frames ?? 0} frames (${a.outputFrames ?? 0} output)`);
  let continuation: string | null = null;
  if (a.continuation) {
    continuation = a.continuation === 'prefill' ? 'continued the answer (sent as a prefill)' : 'continued the answer (a "continue" turn)';
    if (a.prefillRefused) continuation += '; the prefill was refused';
  } else if (a.continuedElsewhere) continuation = next ? `answer continued on attempt ${next.attempt}` : 'answer continued on the next attempt';
  return { figures: parts.length ? parts.join(' · ') : null, watchdog: a.watchdog ? WATCHDOGS[a.watchdog] : null, continuation };
}
