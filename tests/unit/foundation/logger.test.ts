// The logger never writes a secret: registered secrets are scrubbed wherever they appear (event,
// fields at any depth, error messages), credential fields are redacted by name, and a log call
// never throws.
import { describe, expect, it } from 'vitest';
import { createLogger, MemorySink, scrubValues, SecretRedactor } from '../../../src/main/engine/logger';
import { FakeClock } from '../../support/fakeClock';

function setup(secrets: string[] = []) {
  const sink = new MemorySink();
  const redactor = new SecretRedactor();
  for (const s of secrets) redactor.register(s);
  const clock = new FakeClock();
  const log = createLogger({ sinks: [sink], redactor, now: () => clock.now(), level: 'debug' });
  return { sink, log, redactor, text: () => sink.lines.join('') };
}

const SECRET = 'glm-4f8a2c9d1e7b3a6f';

describe('logger redaction', () => {
  it('keeps a registered secret out of the event, top-level and nested fields', () => {
    const { log, text, sink } = setup([SECRET]);
    log.info(`connected with ${SECRET}`, {
      note: `key=${SECRET}`,
      deep: { deeper: { value: SECRET, list: [SECRET, { inArray: `x${SECRET}y` }] } },
    });
    log.child('proxy').child('attempt').warn('retry', { upstreamBody: JSON.stringify({ echoed: SECRET }) });
    expect(sink.lines).toHaveLength(2);
    expect(text()).not.toContain(SECRET);
    expect(text()).toContain('[redacted]');
  });

  it('keeps a registered secret out of error messages, even nested ones', () => {
    const { log, text } = setup([SECRET]);
    const err = new Error(`upstream said: invalid key ${SECRET}`);
    log.error('upstream.failed', { err, context: { cause: new TypeError(`bad ${SECRET}`) }, errors: [new Error(SECRET)] });
    expect(text()).not.toContain(SECRET);
    expect(text()).toContain('upstream said: invalid key [redacted]');
  });

  it('keeps a secret with quotes or backslashes out of the JSON-encoded line', () => {
    const tricky = 'pa"ss\\word-with-quotes';
    const { log, text } = setup([tricky]);
    log.info('login', { detail: `password is ${tricky}` });
    expect(text()).not.toContain(tricky);
    expect(text()).not.toContain(JSON.stringify(tricky).slice(1, -1));
  });

  it('redacts the whole of a secret that contains another registered secret', () => {
    const short = 'abcdef12';
    const long = 'abcdef12-and-more-secret';
    const { log, text } = setup([short, long]);
    log.info('keys', { a: long });
    expect(text()).not.toContain('-and-more-secret');
  });

  it.each(['authorization', 'Authorization', 'x-api-key', 'X-Api-Key', 'apiKey', 'api_key', 'token', 'password', 'cookie'])(
    'redacts a field named %s whatever its value',
    (name) => {
      const { log, text } = setup();
      log.info('request', { [name]: 'opaque-credential-value', headers: { [name]: 'opaque-credential-value' } });
      log.info('request', { list: [{ [name]: 'opaque-credential-value' }] });
      expect(text()).not.toContain('opaque-credential-value');
      expect(text()).toContain(`"${name}":"[redacted]"`);
    },
  );

  it('scrubs bearer tokens and sk- keys that were never registered', () => {
    const { log, text } = setup();
    log.warn('auth.rejected', { line: 'Authorization: Bearer abcdefghijklmnop', body: 'key sk-ant-unregistered123456' });
    expect(text()).not.toContain('abcdefghijklmnop');
    expect(text()).not.toContain('unregistered123456');
  });

  it('writes ordinary fields untouched', () => {
    const { log, sink } = setup([SECRET]);
    log.info('proxy.listening', { port: 8480, host: '127.0.0.1' });
    expect(sink.lines[0]).toMatch(/INFO proxy\.listening \{"port":8480,"host":"127\.0\.0\.1"\}\n$/);
  });

  it('never throws, even on a circular field', () => {
    const { log, sink } = setup();
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    expect(() => log.error('odd', { loop })).not.toThrow();
    expect(sink.lines).toHaveLength(1);
  });

  it('drops lines below the chosen level', () => {
    const sink = new MemorySink();
    const log = createLogger({ sinks: [sink], redactor: new SecretRedactor(), now: () => 0, level: 'warn' });
    log.debug('a');
    log.info('b');
    log.warn('c');
    expect(sink.lines).toHaveLength(1);
  });

  it('stops scrubbing a forgotten secret only when asked', () => {
    const { redactor } = setup();
    redactor.register('longer-secret-1');
    expect(redactor.scrub('x longer-secret-1 y')).toBe('x [redacted] y');
    redactor.forget('longer-secret-1');
    expect(redactor.scrub('x longer-secret-1 y')).toBe('x longer-secret-1 y');
  });
});

describe('secret values held by several owners', () => {
  const shared = 'glm-shared-9f8e7d6c5b4a';

  it('keeps a value scrubbed until the last owner releases it', () => {
    const r = new SecretRedactor();
    r.hold('connection:a', shared);
    r.hold('connection:b', shared);
    r.release('connection:a');
    expect(r.scrub(`key ${shared}`)).toBe('key [redacted]');
    r.release('connection:b');
    expect(r.scrub(`key ${shared}`)).toBe(`key ${shared}`);
  });

  it('keeps the old value scrubbed when one of two owners rotates to a new one', () => {
    const r = new SecretRedactor();
    r.hold('connection:a', shared);
    r.hold('connection:b', shared);
    r.hold('connection:a', 'glm-rotated-1a2b3c4d5e');
    expect(r.scrub(`${shared} glm-rotated-1a2b3c4d5e`)).toBe('[redacted] [redacted]');
    r.hold('connection:b', null);
    expect(r.knows(shared)).toBe(false);
    expect(r.knows('glm-rotated-1a2b3c4d5e')).toBe(true);
  });

  it('counts an owner once however often it holds the same value', () => {
    const r = new SecretRedactor();
    r.hold('clientKey:1', shared);
    r.hold('clientKey:1', shared);
    r.register(shared);
    r.release('clientKey:1');
    expect(r.knows(shared)).toBe(true);
    r.forget(shared);
    expect(r.knows(shared)).toBe(false);
  });
});

describe('short secrets', () => {
  const scrubWith = (secret: string, text: string) => {
    const r = new SecretRedactor();
    r.hold('connection:x', secret);
    return r.scrub(text);
  };

  it.each([
    ['Incorrect API key provided: k9. Check it.', 'Incorrect API key provided: [redacted]. Check it.'],
    ['{"error":{"message":"bad key \\"k9\\""}}', '{"error":{"message":"bad key \\"[redacted]\\""}}'],
    ["invalid key 'k9'", "invalid key '[redacted]'"],
    ['Authorization: Bearer k9', 'Authorization: Bearer [redacted]'],
    ['x-api-key: k9', 'x-api-key: [redacted]'],
    ['API_KEY=k9', 'API_KEY=[redacted]'],
    ['"apiKey":"k9"', '"apiKey":"[redacted]"'],
  ])('scrubs a 1-3 character secret where it stands as the key: %s', (text, want) => {
    expect(scrubWith('k9', text)).toBe(want);
  });

  it('leaves ordinary text around a 1-3 character secret alone', () => {
    expect(scrubWith('a', 'a connection answered 401 after a retry (attempt 1)')).toBe(
      'a connection answered 401 after a retry (attempt 1)',
    );
    expect(scrubWith('k9', 'model k9-large and stock9 are fine')).toBe('model k9-large and stock9 are fine');
    expect(scrubWith('1', '{"attempt":1,"status":401}')).toBe('{"attempt":1,"status":401}');
  });

  it('scrubs a 4-5 character secret as a whole token, never inside a word', () => {
    expect(scrubWith('test', 'key test rejected; latest tests pass')).toBe('key [redacted] rejected; latest tests pass');
    expect(scrubWith('ab12c', 'bad key: ab12c.')).toBe('bad key: [redacted].');
    expect(scrubWith('ab12c', 'xab12c ab12cx')).toBe('xab12c ab12cx');
  });

  it('keeps a short secret out of a log line', () => {
    const sink = new MemorySink();
    const redactor = new SecretRedactor();
    redactor.hold('connection:x', 'zq');
    const log = createLogger({ sinks: [sink], redactor, now: () => 0 });
    log.warn('upstream.rejected', { body: 'Incorrect API key provided: zq', key2: 'zq' });
    expect(sink.lines.join('')).not.toMatch(/provided: zq|"zq"/);
  });
});

describe('text that quotes our own request back', () => {
  const CHARS = 'Zq7+/=Xw9"K3&mP-_~.r8T%nV2yB5cL';
  const scrubWith = (secret: string, text: string) => {
    const r = new SecretRedactor();
    r.hold('connection:x', secret);
    return r.scrub(text);
  };
  /** Our token request as an upstream quotes it: raw JSON, parsed again into JSON, form-encoded, URL-encoded. */
  const quotes = (s: string) => {
    const body = JSON.stringify({ grant_type: 'refresh_token', refresh_token: s, client_id: 'c1' });
    return [
      `invalid_request: ${body}`,
      JSON.stringify({ error_description: `request ${body}` }),
      `request grant_type=refresh_token&${new URLSearchParams({ refresh_token: s }).toString()}&client_id=c1`,
      `GET /v1/models?key=${encodeURIComponent(s)}&x=1`,
      `GET /v1/models?key=${encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase())}&x=1`,
      `Authorization: Bearer ${s}`,
    ];
  };

  it.each(Array.from({ length: 32 }, (_, i) => i + 1))('scrubs a %i-character secret from every quoting of the request', (n) => {
    const secret = CHARS.slice(0, n);
    for (const text of quotes(secret)) {
      const out = scrubWith(secret, text);
      expect(out, text).toContain('[redacted]');
      for (const form of [secret, encodeURIComponent(secret), new URLSearchParams({ v: secret }).toString().slice(2), JSON.stringify(secret).slice(1, -1)]) {
        if (form.length >= 4) expect(out, text).not.toContain(form);
      }
    }
  });

  it('scrubs lease owners and keeps prose intact', () => {
    const owner = `vlo_${'A1b2C3d4_-'.repeat(4)}xyz`;
    expect(new SecretRedactor().scrub(`lease ${owner} refused`)).toBe('lease vlo_[redacted] refused');
    expect(scrubWith('Q7xW', 'the quota of Q7xW was used; Q7xWord stays')).toBe('the quota of [redacted] was used; Q7xWord stays');
  });

  it('scrubs the values one request carried, without registering them anywhere', () => {
    expect(scrubValues('refresh_token=rt%2Fabc%2Bdef&x=1', ['rt/abc+def', null])).toBe('refresh_token=[redacted]&x=1');
  });
});
