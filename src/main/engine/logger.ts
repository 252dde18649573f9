// Structured logger with secret redaction. Every secret the engine decrypts or creates is
// registered here, and every line is scrubbed of registered secrets and of credential-looking
// header values before it is written, so no provider key or token reaches a log line.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LogSink {
  write(line: string): void;
}

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
}

const SENSITIVE_KEYS = /^(authorization|x-api-key|api[-_]?key|secret|token|password|cookie|set-cookie|access[-_]?token|refresh[-_]?token|key)$/i;

/** The password in a URL (what a redactor scrubs of a proxy or Redis address), or null when it has none worth scrubbing. */
export function urlPassword(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const p = decodeURIComponent(new URL(url).password);
    return p.length >= 4 ? p : null;
  } catch {
    return null;
  }
}

/**
 * Every secret value the engine knows, counted per holder, and the scrubbing of text against them.
 *
 * A value stays redacted while anything holds it: two connections sharing one key each hold it, so
 * deleting or rotating one of them leaves the other's key scrubbed. How a value is matched depends
 * on its length, so short secrets are scrubbed without mangling ordinary text:
 * - 6 characters or more: anywhere, also inside a longer word (as a substring);
 * - 4-5 characters: as a whole token, i.e. not next to a letter, digit, "_" or "-";
 * - 1-3 characters: only where a credential stands: quoted on its own ("ab", 'ab', `ab`) or after
 *   a credential word ("Bearer ab", "key: ab", "API key provided: ab", "token=ab").
 * Each value is matched also in every spelling a quoting upstream or a log line's fields give it
 * (`spellings()`: JSON-escaped, URL- and form-encoded); the length rule is the value's own.
 */
export class SecretRedactor {
  /** Value -> how many holders (owners or plain registrations) have it. */
  private readonly counts = new Map<string, number>();
  /** Owner (e.g. "connection:<id>") -> the value it holds. */
  private readonly owners = new Map<string, string>();
  private compiled: CompiledSecrets | null = null;

  /** Adds one reference to a value (undone by one forget()). Empty values are ignored. */
  register(secret: string | null | undefined): void {
    if (!secret) return;
    this.counts.set(secret, (this.counts.get(secret) ?? 0) + 1);
    this.compiled = null;
  }

  /** Drops one reference; the value is no longer scrubbed once no reference is left. */
  forget(secret: string | null | undefined): void {
    if (!secret) return;
    const n = this.counts.get(secret);
    if (n === undefined) return;
    if (n > 1) this.counts.set(secret, n - 1);
    else {
      this.counts.delete(secret);
      this.compiled = null;
    }
  }

  /**
   * Records the value `owner` holds now (null: none), releasing the one it held before. Callers
   * that own a secret (a connection, a client key) use this, so references can never be unbalanced.
   */
  hold(owner: string, secret: string | null | undefined): void {
    const before = this.owners.get(owner);
    if (before === (secret || undefined)) return;
    if (secret) {
      this.register(secret);
      this.owners.set(owner, secret);
    } else this.owners.delete(owner);
    this.forget(before);
  }

  release(owner: string): void {
    this.hold(owner, null);
  }

  /** True when the value is scrubbed (for tests and diagnostics). */
  knows(secret: string): boolean {
    return this.counts.has(secret);
  }

  scrub(text: string): string {
    const c = (this.compiled ??= compile([...this.counts.keys()]));
    let out = text;
    // Longest first, so a secret that contains another is removed whole.
    for (const form of c.anywhere) {
      if (out.includes(form)) out = out.split(form).join(REDACTED);
    }
    if (c.token) out = out.replace(c.token, REDACTED);
    if (c.quoted) out = out.replace(c.quoted, `$1${REDACTED}$2`);
    if (c.cued) out = out.replace(c.cued, `$1${REDACTED}`);
    // Bearer tokens and sk-style keys that were never registered (e.g. a client's wrong key).
    out = out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g, '$1[redacted]');
    out = out.replace(/\b(sk|sym|rk)-[A-Za-z0-9_-]{8,}/g, '$1-[redacted]');
    // Lease owners (`vlo_` + 43 base64url characters): only their hash is kept, so they are matched by shape.
    out = out.replace(/\bvlo_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g, 'vlo_[redacted]');
    return out;
  }
}

const REDACTED = '[redacted]';
/** Secrets at least this long are scrubbed anywhere; shorter ones as tokens or in credential spots. */
const SUBSTRING_MIN = 6;
const TOKEN_MIN = 4;
/** Characters that continue a key-like token: a short secret next to one of them is part of a word. */
const KEY_CHARS = 'A-Za-z0-9_-';

interface CompiledSecrets {
  anywhere: string[];
  token: RegExp | null;
  quoted: RegExp | null;
  cued: RegExp | null;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** A case-insensitive spelling of a lowercase word, without making the secrets themselves so. */
const anyCase = (w: string) => [...w].map((ch) => (/[a-z]/.test(ch) ? `[${ch}${ch.toUpperCase()}]` : ch)).join('');
/** Words after which a short value is taken for a credential ("Bearer x", "API key provided: x"). */
const CUE = `(?:${['bearer', 'key', 'token', 'secret', 'password', 'credential'].map(anyCase).join('|')})s?(?:\\s+${anyCase('provided')})?`;
const QUOTE = `(?:\\\\?["'\`])`;

/**
 * The ways a value is written when an upstream quotes it back: as is, JSON-escaped (once, and twice
 * for a JSON body quoted inside a JSON string), URL-encoded (`encodeURIComponent`, with upper- or
 * lowercase hex) and form-encoded (`application/x-www-form-urlencoded`).
 */
export function spellings(v: string): Set<string> {
  const json = JSON.stringify(v).slice(1, -1);
  const url = encodeURIComponent(v);
  const form = new URLSearchParams({ v }).toString().slice(2);
  const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase());
  return new Set([v, json, JSON.stringify(json).slice(1, -1), url, lowerHex(url), form, lowerHex(form)]);
}

/** Scrubs text of the given values alone (e.g. the secrets one request carried), by the same rules. */
export function scrubValues(text: string, values: readonly (string | null | undefined)[]): string {
  const r = new SecretRedactor();
  for (const v of values) r.register(v);
  return r.scrub(text);
}

function compile(values: string[]): CompiledSecrets {
  const anywhere: string[] = [];
  const token: string[] = [];
  const short: string[] = [];
  for (const v of values) {
    const forms = spellings(v);
    const into = v.length >= SUBSTRING_MIN ? anywhere : v.length >= TOKEN_MIN ? token : short;
    into.push(...forms);
  }
  const byLength = (xs: string[]) => [...new Set(xs)].sort((a, b) => b.length - a.length);
  const alt = (xs: string[]) => byLength(xs).map(escapeRe).join('|');
  return {
    anywhere: byLength(anywhere),
    token: token.length ? new RegExp(`(?<![${KEY_CHARS}])(?:${alt(token)})(?![${KEY_CHARS}])`, 'g') : null,
    quoted: short.length ? new RegExp(`(${QUOTE})(?:${alt(short)})(${QUOTE})`, 'g') : null,
    cued: short.length ? new RegExp(`(${CUE}[\\s:=]+${QUOTE}?)(?:${alt(short)})(?![${KEY_CHARS}])`, 'g') : null,
  };
}

const MAX_DEPTH = 8;

/** Copies a field value with credential-named fields redacted at any depth (arrays included). */
function safeValue(v: unknown, path: object[]): unknown {
  if (v instanceof Error) return { name: v.name, message: v.message, code: (v as { code?: unknown }).code };
  if (v === null || typeof v !== 'object') return v;
  if (path.includes(v)) return '[circular]';
  if (path.length >= MAX_DEPTH) return '[nested too deep]';
  const inner = [...path, v];
  if (Array.isArray(v)) return v.map((x) => safeValue(x, inner));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = SENSITIVE_KEYS.test(k) ? '[redacted]' : safeValue(x, inner);
  return out;
}

function fieldsJson(fields: Record<string, unknown>): string {
  try {
    return JSON.stringify(safeValue(fields, []));
  } catch {
    return '"[fields could not be serialised]"';
  }
}

export function createLogger(opts: {
  sinks: LogSink[];
  level?: LogLevel;
  redactor: SecretRedactor;
  now: () => number;
  scope?: string;
}): Logger {
  const min = LEVELS[opts.level ?? 'info'];
  const now = opts.now;
  const make = (scope: string | undefined): Logger => {
    const log = (level: LogLevel, event: string, fields?: Record<string, unknown>) => {
      if (LEVELS[level] < min) return;
      const body = fields ? ` ${fieldsJson(fields)}` : '';
      const line = `${new Date(now()).toISOString()} ${level.toUpperCase()} ${scope ? `${scope}.` : ''}${event}${body}`;
      const clean = opts.redactor.scrub(line);
      for (const s of opts.sinks) s.write(`${clean}\n`);
    };
    return {
      debug: (e, f) => log('debug', e, f),
      info: (e, f) => log('info', e, f),
      warn: (e, f) => log('warn', e, f),
      error: (e, f) => log('error', e, f),
      child: (s) => make(scope ? `${scope}.${s}` : s),
    };
  };
  return make(opts.scope);
}

export const stderrSink: LogSink = { write: (l) => void process.stderr.write(l) };

/** Keeps lines in memory (tests assert on them). */
export class MemorySink implements LogSink {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
}
