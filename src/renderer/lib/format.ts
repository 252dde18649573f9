// Formatting for the dashboard: durations, countdowns, relative times, setting units. Pure
// functions of their inputs (the caller passes "now"), so they are unit-tested without a clock.
import type { SettingUnit } from '../../shared/settings';

const SEC = 1_000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const pad = (n: number) => String(n).padStart(2, '0');

/** A remaining time as a countdown: "45s", "4m 05s", "2h 03m", "3d 4h". Never negative. */
export function formatRemaining(ms: number): string {
  const v = Math.max(0, Math.ceil(ms / SEC) * SEC);
  if (v < MIN) return `${v / SEC}s`;
  if (v < HOUR) return `${Math.floor(v / MIN)}m ${pad(Math.floor((v % MIN) / SEC))}s`;
  if (v < DAY) return `${Math.floor(v / HOUR)}h ${pad(Math.floor((v % HOUR) / MIN))}m`;
  return `${Math.floor(v / DAY)}d ${Math.floor((v % DAY) / HOUR)}h`;
}

/** A configured duration in words: "500 ms", "3 s", "1.5 min", "2 h", "30 days". */
export function formatDuration(ms: number): string {
  if (ms < SEC) return `${ms} ms`;
  const unit = ms < MIN ? [SEC, 's'] : ms < HOUR ? [MIN, 'min'] : ms < DAY ? [HOUR, 'h'] : [DAY, ms === DAY ? 'day' : 'days'];
  const n = ms / (unit[0] as number);
  const shown = Number.isInteger(n) ? String(n) : n.toFixed(n < 10 ? 1 : 0);
  return `${shown} ${unit[1] as string}`;
}

/** "just now", "12s ago", "5 min ago", "3 h ago", else a date. */
export function formatAgo(at: number, now: number): string {
  const d = now - at;
  if (d < 5 * SEC) return 'just now';
  if (d < MIN) return `${Math.floor(d / SEC)}s ago`;
  if (d < HOUR) return `${Math.floor(d / MIN)} min ago`;
  if (d < DAY) return `${Math.floor(d / HOUR)} h ago`;
  return new Date(at).toLocaleDateString();
}

/** Clock time of a log entry: "14:03:27". */
export function formatClock(at: number): string {
  const d = new Date(at);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < SEC) return `${Math.round(ms)} ms`;
  return `${(ms / SEC).toFixed(ms < 10 * SEC ? 2 : 1)} s`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
}

export const UNIT_LABEL: Record<SettingUnit, string> = {
  ms: 'ms',
  s: 's',
  count: '',
  bytes: 'bytes',
  port: '',
  points: 'points',
  days: 'days',
};

/** A setting value in words for its unit ("60000" ms -> "1 min"), or null when the number says it all. */
export function describeUnitValue(value: unknown, unit: SettingUnit | null): string | null {
  if (typeof value !== 'number') return null;
  if (unit === 'ms' && value >= SEC) return formatDuration(value);
  if (unit === 's' && value >= 60) return formatDuration(value * SEC);
  if (unit === 'bytes' && value >= 1024) return formatBytes(value);
  return null;
}

/** "1–1000", "1 s – 1 day" for ms ranges. */
export function formatRange(min: number | null, max: number | null, unit: SettingUnit | null): string | null {
  if (min === null || max === null) return null;
  const one = (n: number) =>
    unit === 'ms' ? (n >= SEC ? formatDuration(n) : `${n} ms`) : unit === 's' ? formatDuration(n * SEC) : unit === 'bytes' ? formatBytes(n) : n.toLocaleString('en-US');
  const suffix = unit === 'days' ? ' days' : unit === 'points' ? ' points' : '';
  return `${one(min)} – ${one(max)}${suffix}`;
}

export function formatCount(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
