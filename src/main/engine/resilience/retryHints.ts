// Upstream retry hints: how long the upstream asked us to wait, and where it said so. Headers win
// over the body; a typed Google RetryInfo detail is told apart from untyped body fields (retryDelay,
// retry_after, resets_at, ...) and from prose ("try again in 20s", "30 秒后"), because the request
// queue treats them differently (SPEC R-RQ-13, R-RQ-17). Reset headers count only for limits that
// are exhausted (remaining 0) when the upstream says how much is left.

export type HintSource =
  | 'retry-after-ms'
  | 'retry-after'
  | 'x-ratelimit-reset'
  | 'anthropic-ratelimit-reset'
  | 'google_rpc_retry_info'
  | 'body_retry_delay'
  | 'text';

export interface RetryHint {
  ms: number;
  source: HintSource;
}

const HEADER_SOURCES: HintSource[] = ['retry-after-ms', 'retry-after', 'x-ratelimit-reset', 'anthropic-ratelimit-reset'];

/** True for hints that came from a header. */
export const isHeaderHint = (h: RetryHint) => HEADER_SOURCES.includes(h.source);

/**
 * Parses a duration: "30" (seconds), "1.5s", "250ms", "6m0s", "1h2m3.5s", "2s" (Go/Google style).
 * Returns milliseconds, or null.
 */
export function parseDuration(raw: string): number | null {
  const s = raw.trim().toLowerCase();
  if (s === '') return null;
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const n = Number(m[1]);
    total += m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : m[2] === 'm' ? n * 60_000 : n * 3_600_000;
    consumed += m[0].length;
  }
  return consumed === s.length && consumed > 0 ? Math.round(total) : null;
}

/** A reset value that may be a delay in seconds, an epoch (s or ms), a duration or a date. */
function parseResetValue(raw: string, now: number): number | null {
  const s = raw.trim();
  if (/^\d+(\.\d+)?$/.test(s)) {
    const n = Number(s);
    if (n > 1e12) return Math.max(0, Math.round(n - now)); // epoch ms
    if (n > 1e9) return Math.max(0, Math.round(n * 1000 - now)); // epoch s
    return Math.round(n * 1000); // seconds from now
  }
  const d = parseDuration(s);
  if (d !== null) return d;
  const t = Date.parse(s);
  return Number.isFinite(t) ? Math.max(0, t - now) : null;
}

export function retryHintFromHeaders(headers: Record<string, string>, now: number): RetryHint | null {
  const ms = headers['retry-after-ms'];
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return { ms: Math.round(Number(ms)), source: 'retry-after-ms' };

  const ra = headers['retry-after'];
  if (ra) {
    const v = ra.trim();
    if (/^\d+(\.\d+)?$/.test(v)) return { ms: Math.round(Number(v) * 1000), source: 'retry-after' };
    const t = Date.parse(v);
    if (Number.isFinite(t)) return { ms: Math.max(0, t - now), source: 'retry-after' };
  }

  const resets = ['x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens', 'x-ratelimit-reset']
    .filter((k) => {
      // As with Anthropic's headers below: a limit with requests left does not say when this one passes.
      const remaining = headers[k.replace(/reset/, 'remaining')];
      return remaining === undefined || !(Number(remaining) > 0);
    })
    .map((k) => headers[k])
    .filter((v): v is string => !!v)
    .map((v) => parseResetValue(v, now))
    .filter((v): v is number => v !== null);
  if (resets.length) return { ms: Math.max(...resets), source: 'x-ratelimit-reset' };

  const anth = [
    'anthropic-ratelimit-requests-reset',
    'anthropic-ratelimit-tokens-reset',
    'anthropic-ratelimit-input-tokens-reset',
    'anthropic-ratelimit-output-tokens-reset',
  ]
    .filter((k) => {
      // Only the limits that are exhausted say when this request could pass.
      const remaining = headers[k.replace(/-reset$/, '-remaining')];
      return remaining === undefined || Number(remaining) <= 0;
    })
    .map((k) => headers[k])
    .filter((v): v is string => !!v)
    .map((v) => parseResetValue(v, now))
    .filter((v): v is number => v !== null);
  if (anth.length) return { ms: Math.max(...anth), source: 'anthropic-ratelimit-reset' };
  return unifiedResetHint(headers, now);
}

/**
 * Claude subscription (unified) limits: when the unified status, or one window's status (5h, 7d),
 * is `rejected`, its `-reset` header (epoch seconds) says when the account can be used again.
 */
function unifiedResetHint(headers: Record<string, string>, now: number): RetryHint | null {
  let ms: number | null = null;
  for (const name in headers) {
    if (!name.startsWith('anthropic-ratelimit-unified') || !name.endsWith('-status')) continue;
    if (headers[name]!.trim().toLowerCase() !== 'rejected') continue;
    const reset = headers[`${name.slice(0, -'-status'.length)}-reset`];
    const v = reset ? parseResetValue(reset, now) : null;
    if (v !== null && (ms === null || v > ms)) ms = v;
  }
  return ms !== null ? { ms, source: 'anthropic-ratelimit-reset' } : null;
}

interface GoogleDetail {
  '@type'?: string;
  retryDelay?: string;
}

export function retryHintFromBody(body: string, now: number): RetryHint | null {
  if (!body) return null;
  // Typed Google RetryInfo (Gemini): error.details[] with @type ...google.rpc.RetryInfo.
  if (body.includes('retryDelay')) {
    try {
      const j = JSON.parse(body) as { error?: { details?: GoogleDetail[] } } | { error?: { details?: GoogleDetail[] } }[];
      const err = Array.isArray(j) ? j[0]?.error : j.error;
      for (const d of err?.details ?? []) {
        if (d.retryDelay && d['@type']?.endsWith('google.rpc.RetryInfo')) {
          const ms = parseDuration(d.retryDelay);
          if (ms !== null) return { ms, source: 'google_rpc_retry_info' };
        }
      }
    } catch {
      // fall through to the untyped forms
    }
    const m = /"retryDelay"\s*:\s*"([^"]+)"/.exec(body);
    const ms = m ? parseDuration(m[1]!) : null;
    if (ms !== null) return { ms, source: 'body_retry_delay' };
  }
  return retryHintFromBodyFields(body, now) ?? retryHintFromText(body, now);
}

/** Seconds-or-duration fields some providers put in their JSON errors. */
const DELAY_FIELD = /"(retry_after|retryAfter|retry_after_seconds|resets_in_seconds)"\s*:\s*"?(\d+(?:\.\d+)?(?:ms|s|m|h)?)"?/;
/** Absolute reset times (epoch seconds/ms or ISO date). */
const RESET_AT_FIELD = /"(resets_at|reset_at|resetAt|resetsAt)"\s*:\s*"?([0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+(?:Z|[+-][0-9:]+)?|\d{10,13})"?/;

function retryHintFromBodyFields(body: string, now: number): RetryHint | null {
  if (body.length > 65_536 || !/"(retry|reset)/i.test(body)) return null;
  const d = DELAY_FIELD.exec(body);
  if (d) {
    const ms = parseDuration(d[2]!);
    if (ms !== null) return { ms, source: 'body_retry_delay' };
  }
  const r = RESET_AT_FIELD.exec(body);
  if (r) {
    const ms = parseResetValue(r[2]!, now);
    if (ms !== null) return { ms, source: 'body_retry_delay' };
  }
  return null;
}

const TEXT_PATTERNS: RegExp[] = [
  /(?:retry|try again|resets?)\s+(?:after|in)\s+(?:about\s+)?(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b/i,
  /(?:retry|try again|resets?)\s+(?:after|in)\s+((?:\d+(?:\.\d+)?(?:h|m|s|ms))+)\b/i,
  /(?:wait|please wait)\s+(\d+(?:\.\d+)?)\s*(s|secs?|seconds?|m|mins?|minutes?)\b/i,
  // Chinese providers: "请在 30 秒后重试", "5分钟后重试".
  /(\d+(?:\.\d+)?)\s*(秒|分钟|小时)\s*后/,
];

const CJK_UNIT: Record<string, number> = { 秒: 1000, 分钟: 60_000, 小时: 3_600_000 };

export function retryHintFromText(text: string, now: number): RetryHint | null {
  for (const re of TEXT_PATTERNS) {
    const m = re.exec(text);
    if (!m) continue;
    if (m[2] && CJK_UNIT[m[2]] !== undefined) return { ms: Math.round(Number(m[1]) * CJK_UNIT[m[2]]!), source: 'text' };
    if (m[2]) {
      const n = Number(m[1]);
      const u = m[2].toLowerCase();
      const ms = u.startsWith('ms') || u.startsWith('milli') ? n : u.startsWith('h') ? n * 3_600_000 : u.startsWith('m') ? n * 60_000 : n * 1000;
      return { ms: Math.round(ms), source: 'text' };
    }
    const d = parseDuration(m[1]!);
    if (d !== null) return { ms: d, source: 'text' };
  }
  const reset = /resets?\s+(?:at|on)\s+([0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+(?:Z|[+-][0-9:]+)?)/i.exec(text);
  if (reset) {
    const t = Date.parse(reset[1]!);
    if (Number.isFinite(t)) return { ms: Math.max(0, t - now), source: 'text' };
  }
  return null;
}

/** Headers first, then the body (typed RetryInfo, untyped retryDelay, then prose). */
export function retryHintFrom(headers: Record<string, string>, body: string, now: number): RetryHint | null {
  return retryHintFromHeaders(headers, now) ?? retryHintFromBody(body, now);
}

/** One violation of a Google `QuotaFailure` detail: which quota ran out. */
export interface GoogleQuotaViolation {
  /** e.g. `GenerateRequestsPerDayPerProjectPerModel-FreeTier`. */
  quotaId: string | null;
  /** e.g. `generativelanguage.googleapis.com/generate_content_free_tier_requests`. */
  quotaMetric: string | null;
  /** The model the quota is counted for (`quotaDimensions.model`), when it says. */
  model: string | null;
  /** The quota is counted per model (by its id, or a model dimension). */
  perModel: boolean;
  /** The window the quota id names: a day's quota needs the long wait, a minute's passes soon. */
  window: 'day' | 'hour' | 'minute' | null;
}

const QUOTA_WINDOW: [RegExp, GoogleQuotaViolation['window']][] = [
  [/per ?day/i, 'day'],
  [/per ?hour/i, 'hour'],
  [/per ?minute/i, 'minute'],
];

/**
 * The violations of a typed Google `QuotaFailure` detail (`error.details[]` with @type
 * ...google.rpc.QuotaFailure) in an error body (an object, or the one-element array a JSON stream
 * error comes as). Empty when there is none.
 */
export function googleQuotaFailure(body: string): GoogleQuotaViolation[] {
  if (!body || !body.includes('QuotaFailure')) return [];
  let j: any;
  try {
    j = JSON.parse(body);
  } catch {
    return [];
  }
  const err = Array.isArray(j) ? j[0]?.error : j?.error;
  const out: GoogleQuotaViolation[] = [];
  for (const d of Array.isArray(err?.details) ? err.details : []) {
    if (typeof d?.['@type'] !== 'string' || !d['@type'].endsWith('google.rpc.QuotaFailure')) continue;
    for (const v of Array.isArray(d.violations) ? d.violations : []) {
      const quotaId = typeof v?.quotaId === 'string' ? v.quotaId : null;
      const quotaMetric = typeof v?.quotaMetric === 'string' ? v.quotaMetric : null;
      const model = typeof v?.quotaDimensions?.model === 'string' ? v.quotaDimensions.model : null;
      const words = `${quotaId ?? ''} ${quotaMetric ?? ''}`;
      out.push({
        quotaId,
        quotaMetric,
        model,
        perModel: model !== null || /per ?model/i.test(words),
        window: QUOTA_WINDOW.find(([re]) => re.test(words))?.[1] ?? null,
      });
    }
  }
  return out;
}
