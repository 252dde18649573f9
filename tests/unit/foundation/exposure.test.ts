// A team server's opt-in (net/exposure.ts): the address both servers listen on and the host names
// they answer. Without it the checks are the loopback ones, unchanged; with it, loopback plus exactly
// the names given, so a DNS-rebinding page (Host: its own name) is still refused.
import { describe, expect, it } from 'vitest';
import {
  dashboardOrigin,
  hostCheck,
  localOrigin,
  LOOPBACK_ONLY,
  originCheck,
  proxyOrigin,
  resolveExposure,
  type Exposure,
  type ExposureInput,
} from '../../../src/main/engine/net/exposure';
import { isLoopbackHost } from '../../../src/main/engine/net/loopback';

const flag = (from: string, value: string) => ({ value, from });
const resolved = (input: ExposureInput): { exposure: Exposure; warnings: string[] } => {
  const r = resolveExposure(input);
  if (!r.ok) throw new Error(r.error);
  return r;
};
const refused = (input: ExposureInput): string => {
  const r = resolveExposure(input);
  if (r.ok) throw new Error(`accepted: ${JSON.stringify(r.exposure)}`);
  return r.error;
};

describe('without the opt-in', () => {
  it('listens on 127.0.0.1 and checks Host with the loopback check itself', () => {
    const { exposure, warnings } = resolved({});
    expect(exposure).toEqual(LOOPBACK_ONLY);
    expect(warnings).toEqual([]);
    expect(hostCheck(exposure)).toBe(isLoopbackHost);
  });

  it('refuses every non-loopback Host and Origin', () => {
    const host = hostCheck(LOOPBACK_ONLY);
    const origin = originCheck(LOOPBACK_ONLY);
    expect(host('127.0.0.1:8480')).toBe(true);
    expect(host('192.0.2.2:8480')).toBe(false);
    expect(host('switchyard.example.com')).toBe(false);
    expect(origin(undefined)).toBe(true);
    expect(origin('http://localhost:8481')).toBe(true);
    expect(origin('http://switchyard.example.com')).toBe(false);
  });

  it('shows loopback addresses', () => {
    expect(dashboardOrigin(LOOPBACK_ONLY, 8481)).toBe('http://127.0.0.1:8481');
    expect(proxyOrigin(LOOPBACK_ONLY, 8480)).toBe('http://127.0.0.1:8480');
    expect(localOrigin(LOOPBACK_ONLY, 8480)).toBe('http://127.0.0.1:8480');
  });
});

describe('a public bind with allowed names', () => {
  const { exposure, warnings } = resolved({
    host: flag('--host', '0.0.0.0'),
    allowedHosts: flag('SWITCHYARD_ALLOWED_HOSTS', 'Switchyard.Example.com, 192.0.2.2 [fd00::2]'),
  });
  const host = hostCheck(exposure);
  const origin = originCheck(exposure);

  it('listens on the address given and keeps the names, normalised', () => {
    expect(exposure).toMatchObject({ bindHost: '0.0.0.0', publicBind: true, allowedHosts: ['switchyard.example.com', '192.0.2.2', 'fd00::2'] });
  });

  it.each(['switchyard.example.com', 'SWITCHYARD.example.com:8480', '192.0.2.2:8481', '[fd00::2]:8480', '127.0.0.1:8480', 'localhost', '[::1]:1'])(
    'accepts Host %s (any port; loopback always)',
    (h) => expect(host(h)).toBe(true),
  );

  it.each([
    undefined,
    '',
    'evil.example',
    'switchyard.example.com.evil.example',
    'evil.switchyard.example.com',
    'switchyard.example.com:99999',
    '192.0.2.3',
    '[fd00::3]:8480',
    'switchyard.example.com#x',
    '0.0.0.0:8480',
  ])('refuses Host %j (a rebinding page sends its own name)', (h) => expect(host(h)).toBe(false));

  it('checks Origin against the same names', () => {
    expect(origin(undefined)).toBe(true);
    expect(origin('https://switchyard.example.com')).toBe(true);
    expect(origin('http://192.0.2.2:8481')).toBe(true);
    expect(origin('http://evil.example')).toBe(false);
    expect(origin('null')).toBe(false);
  });

  it('shows the first name, and warns that plain http crosses the network', () => {
    expect(dashboardOrigin(exposure, 8481)).toBe('http://switchyard.example.com:8481');
    expect(proxyOrigin(exposure, 8480)).toBe('http://switchyard.example.com:8480');
    expect(localOrigin(exposure, 8480)).toBe('http://127.0.0.1:8480');
    expect(exposure.secureCookie).toBe(false);
    expect(warnings.join('\n')).toMatch(/dashboard is reached over plain http/);
    expect(warnings.join('\n')).toMatch(/proxy is reached over plain http/);
  });
});

describe('public addresses', () => {
  it('allows the names of --public-url and --proxy-url, marks the cookie Secure on https, and does not warn', () => {
    const { exposure, warnings } = resolved({
      host: flag('--host', '::'),
      publicUrl: flag('--public-url', 'https://switchyard.example.com/'),
      proxyUrl: flag('--proxy-url', 'https://llm.example.com:8443'),
    });
    expect(exposure).toMatchObject({
      bindHost: '::',
      publicBind: true,
      allowedHosts: ['switchyard.example.com', 'llm.example.com'],
      publicUrl: 'https://switchyard.example.com',
      proxyUrl: 'https://llm.example.com:8443',
      secureCookie: true,
    });
    expect(warnings).toEqual([]);
    expect(dashboardOrigin(exposure, 8481)).toBe('https://switchyard.example.com');
    expect(proxyOrigin(exposure, 8480)).toBe('https://llm.example.com:8443');
    expect(localOrigin(exposure, 8480)).toBe('http://[::1]:8480');
  });

  it('behind a reverse proxy on this machine: loopback bind, public names answered, no warning', () => {
    const { exposure, warnings } = resolved({ publicUrl: flag('SWITCHYARD_PUBLIC_URL', 'https://switchyard.example.com') });
    expect(exposure).toMatchObject({ bindHost: '127.0.0.1', publicBind: false, allowedHosts: ['switchyard.example.com'] });
    expect(hostCheck(exposure)('switchyard.example.com')).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('a specific address is answered by its own literal and reached there', () => {
    const { exposure } = resolved({ host: flag('--host', '192.0.2.2') });
    expect(exposure.allowedHosts).toEqual(['192.0.2.2']);
    expect(hostCheck(exposure)('192.0.2.2:8480')).toBe(true);
    expect(localOrigin(exposure, 8480)).toBe('http://192.0.2.2:8480');
  });
});

describe('refused with a plain error', () => {
  it.each<[ExposureInput, RegExp]>([
    [{ host: flag('--host', 'switchyard.example.com') }, /^--host needs an IP address to listen on, e\.g\. 0\.0\.0\.0/],
    [{ host: flag('SWITCHYARD_HOST', '0.0.0.0:8480') }, /^SWITCHYARD_HOST needs an IP address/],
    [{ host: flag('--host', '0.0.0.0') }, /^--host 0\.0\.0\.0 listens on every interface, but no host name is allowed.*--allowed-host/],
    [{ host: flag('--host', '::') }, /no host name is allowed/],
    [{ allowedHosts: flag('--allowed-host', '*') }, /^--allowed-host: "\*" is a wildcard; list each host name/],
    [{ allowedHosts: flag('--allowed-host', '*.example.com') }, /wildcard/],
    [{ allowedHosts: flag('SWITCHYARD_ALLOWED_HOSTS', 'ok.example.com,https://x.example.com') }, /^SWITCHYARD_ALLOWED_HOSTS: "https:\/\/x\.example\.com" is an address, not a host name/],
    [{ allowedHosts: flag('--allowed-host', 'x.example.com:8480') }, /has a port; give the host name alone/],
    [{ allowedHosts: flag('--allowed-host', 'bad_name!') }, /"bad_name!" is not a host name/],
    [{ allowedHosts: flag('--allowed-host', '0.0.0.0') }, /is not an address clients can use/],
    [{ allowedHosts: flag('--allowed-host', '[x]') }, /is not an IPv6 address/],
    [{ publicUrl: flag('--public-url', 'switchyard.example.com') }, /^--public-url needs an address such as https:\/\//],
    [{ publicUrl: flag('--public-url', 'ftp://switchyard.example.com') }, /must start with https:\/\//],
    [{ publicUrl: flag('--public-url', 'https://switchyard.example.com/dash') }, /without a path/],
    [{ proxyUrl: flag('SWITCHYARD_PROXY_URL', 'https://u:p@llm.example.com') }, /^SWITCHYARD_PROXY_URL must not hold a user name or password/],
  ])('%j', (input, message) => {
    expect(refused(input)).toMatch(message);
  });
});
