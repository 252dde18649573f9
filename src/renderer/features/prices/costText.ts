// How the dashboard writes token counts and a request's cost: "1,234 in · 56 out · $0.0042", and
// the prompt-cache part of the input for the details ("1,000 read from the cache, 200 written").
import type { RequestLogEntry } from '../../../shared/model';

const count = (n: number) => n.toLocaleString('en-US');

/** US dollars with enough digits to tell small costs apart ($0.0042, $1.25, under a hundredth of a cent: <$0.0001). */
export function formatUsd(v: number): string {
  if (v === 0) return '$0';
  if (v < 0.0001) return '<$0.0001';
  if (v < 1) return `$${v.toFixed(4)}`;
  return `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** The Tokens cell of a log row; null when the request reported no tokens. */
export function tokensText(e: Pick<RequestLogEntry, 'inputTokens' | 'outputTokens' | 'costUsd'>): string | null {
  if (e.inputTokens === null && e.outputTokens === null) return null;
  const parts = [`${e.inputTokens === null ? '?' : count(e.inputTokens)} in`, `${e.outputTokens === null ? '?' : count(e.outputTokens)} out`];
  if (e.costUsd != null) parts.push(formatUsd(e.costUsd));
  return parts.join(' · ');
}

/** The prompt-cache line of a request's details; null when the provider reported no cache use. */
export function cacheText(e: Pick<RequestLogEntry, 'cacheReadTokens' | 'cacheWriteTokens'>): string | null {
  const read = e.cacheReadTokens ?? 0;
  const write = e.cacheWriteTokens ?? 0;
  if (!read && !write) return null;
  const parts: string[] = [];
  if (read) parts.push(`${count(read)} read from the prompt cache`);
  if (write) parts.push(`${count(write)} written to it`);
  return `Of the input tokens, ${parts.join(' and ')}.`;
}
