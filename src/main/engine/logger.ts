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

export class SecretRedactor {
  private readonly secrets = new Set<string>();

  register(secret: string | null | undefined): void {
    if (secret && secret.length >= 6) this.secrets.add(secret);
  }

  forget(secret: string | null | undefined): void {
    if (secret) this.secrets.delete(secret);
  }

  scrub(text: string): string {
    let out = text;
    // Longest first, so a secret that contains another is removed whole; each also in its
    // JSON-escaped form, which is how it appears inside a line's fields.
    for (const s of [...this.secrets].sort((a, b) => b.length - a.length)) {
      for (const form of new Set([s, JSON.stringify(s).slice(1, -1)])) {
        if (out.includes(form)) out = out.split(form).join('[redacted]');
      }
    }
    // Bearer tokens and sk-style keys that were never registered (e.g. a client's wrong key).
    out = out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g, '$1[redacted]');
    out = out.replace(/\b(sk|sym|rk)-[A-Za-z0-9_-]{8,}/g, '$1-[redacted]');
    return out;
  }
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
