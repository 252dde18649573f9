// Loopback checks behind both servers: only loopback names pass as Host or Origin, which defeats
// DNS rebinding (a page on evil.example resolving to 127.0.0.1 still sends Host: evil.example).
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, isLoopbackOrigin } from '../../../src/main/engine/net/loopback';

describe('isLoopbackHost', () => {
  it.each(['127.0.0.1', '127.0.0.1:8481', 'localhost', 'localhost:8480', 'LOCALHOST:1', '[::1]', '[::1]:8481', '127.1.2.3:80'])(
    'accepts %s',
    (host) => expect(isLoopbackHost(host)).toBe(true),
  );

  it.each([
    undefined,
    '',
    'evil.example',
    'evil.example:8481',
    'localhost.evil.example',
    'localhost.evil.example:8481',
    '127.0.0.1.nip.io',
    '127.0.0.1.evil.example:8481',
    'evil.example#127.0.0.1',
    '0.0.0.0:8481',
    '192.168.1.10:8481',
    '10.0.0.1',
    '[::ffff:7f00:1]:8481',
    '[::1].evil.example',
    '[::1]evil:8481',
    'localhost:8481:8481',
    'localhost:abc',
    '127.0.0.256',
  ])('refuses %j', (host) => expect(isLoopbackHost(host)).toBe(false));

  it('answers each header for itself when the same one comes again and again, then another (the last answer is kept)', () => {
    const seq = ['localhost:8481', 'localhost:8481', 'evil.example:8481', 'evil.example:8481', 'localhost:8481', undefined, undefined, '127.0.0.1', ''];
    expect(seq.map((h) => isLoopbackHost(h))).toEqual([true, true, false, false, true, false, false, true, false]);
  });
});

describe('isLoopbackOrigin', () => {
  it.each(['http://127.0.0.1:8481', 'http://localhost:5173', 'http://[::1]:8481', 'https://localhost'])('accepts %s', (o) =>
    expect(isLoopbackOrigin(o)).toBe(true),
  );

  it('accepts a request without Origin (curl, the SDKs, same-origin GETs)', () => {
    expect(isLoopbackOrigin(undefined)).toBe(true);
  });

  it.each(['http://evil.example', 'http://localhost.evil.example:8481', 'null', 'file://', 'not a url', 'http://127.0.0.1.nip.io'])(
    'refuses %j',
    (o) => expect(isLoopbackOrigin(o)).toBe(false),
  );
});
