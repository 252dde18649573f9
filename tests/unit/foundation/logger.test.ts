// The logger never writes a secret: registered secrets are scrubbed wherever they appear (event,
// fields at any depth, error messages), credential fields are redacted by name, and a log call
// never throws.
import { describe, expect, it } from 'vitest';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
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

  it('stops scrubbing a forgotten secret only when asked, and ignores too-short values', () => {
    const { redactor } = setup();
    redactor.register('abc');
    expect(redactor.scrub('abc')).toBe('abc');
    redactor.register('longer-secret-1');
    expect(redactor.scrub('x longer-secret-1 y')).toBe('x [redacted] y');
  });
});
