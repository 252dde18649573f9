// Who may reach the two HTTP servers (the proxy, and the management API with the dashboard).
// By default loopback only: bound to 127.0.0.1, Host and Origin must name loopback. A team server
// opts in (`--host`, `--allowed-host`, `--public-url`, `--proxy-url`, or their environment
// variables): it listens on the address given and accepts, besides loopback, exactly the host names
// it was given. Naming them keeps DNS rebinding defeated (a page on evil.example that resolves to
// this server still sends Host: evil.example); the management token and client keys are required
// as before. TLS is terminated in front of it (a reverse proxy or the platform).
import { isIP } from 'node:net';
import { hostNameOf, isLoopbackHost, isLoopbackName } from './loopback';

export interface Exposure {
  /** The address both servers listen on. */
  readonly bindHost: string;
  /** Listening on an address other machines can reach (not loopback). */
  readonly publicBind: boolean;
  /** Names accepted in Host and Origin besides loopback: lower case, IPv6 without brackets. */
  readonly allowedHosts: readonly string[];
  /** The dashboard's address as people open it (an origin, e.g. https://switchyard.example.com). */
  readonly publicUrl: string | null;
  /** The proxy's address as agents reach it (an origin). */
  readonly proxyUrl: string | null;
  /** The session cookie is marked Secure: the dashboard is reached over https. */
  readonly secureCookie: boolean;
}

export const LOOPBACK_ONLY: Exposure = Object.freeze({
  bindHost: '127.0.0.1',
  publicBind: false,
  allowedHosts: Object.freeze([]) as readonly string[],
  publicUrl: null,
  proxyUrl: null,
  secureCookie: false,
});

/** True when names other than loopback are accepted (the opt-in). */
export const answersOtherNames = (e: Exposure): boolean => e.allowedHosts.length > 0;

/**
 * The Host check for a server. Without the opt-in it is the loopback check itself, so the default
 * costs nothing more per request.
 */
export function hostCheck(e: Exposure): (host: string | undefined) => boolean {
  if (!answersOtherNames(e)) return isLoopbackHost;
  const allowed = new Set(e.allowedHosts);
  return (host) => {
    const h = hostNameOf(host);
    return h !== null && (isLoopbackName(h) || allowed.has(h.name));
  };
}

/** The Origin check: no Origin (curl, SDKs, same-origin GETs) passes; otherwise its host must pass. */
export function originCheck(e: Exposure): (origin: string | undefined) => boolean {
  const host = hostCheck(e);
  return (origin) => {
    if (!origin) return true;
    try {
      return host(new URL(origin).host);
    } catch {
      return false;
    }
  };
}

const WILDCARDS = new Set(['0.0.0.0', '::']);

/** A host for a URL: IPv6 in brackets. */
const urlHost = (name: string) => (name.includes(':') ? `[${name}]` : name);

/** How this process reaches its own servers (e.g. the combo tester calling the proxy). */
export function localOrigin(e: Exposure, port: number): string {
  if (e.bindHost === '::' || e.bindHost === '::1') return `http://[::1]:${port}`;
  if (WILDCARDS.has(e.bindHost) || e.bindHost.startsWith('127.')) return `http://127.0.0.1:${port}`;
  return `http://${urlHost(e.bindHost)}:${port}`;
}

/** The name shown when no URL was given: the first allowed name, else loopback. */
const shownHost = (e: Exposure) => (e.allowedHosts.length > 0 ? urlHost(e.allowedHosts[0]!) : '127.0.0.1');

/** The dashboard's address as people open it. */
export function dashboardOrigin(e: Exposure, port: number): string {
  return e.publicUrl ?? `http://${shownHost(e)}:${port}`;
}

/** The proxy's address as agents reach it (shown on "Connect your agent"). */
export function proxyOrigin(e: Exposure, port: number): string {
  return e.proxyUrl ?? `http://${shownHost(e)}:${port}`;
}

/** One value and where it came from (a flag or an environment variable), for the error messages. */
export interface Given {
  value: string;
  from: string;
}

export interface ExposureInput {
  host?: Given;
  /** Each is a list of names separated by commas or spaces. */
  allowedHosts?: Given;
  publicUrl?: Given;
  proxyUrl?: Given;
}

export type ExposureResult = { ok: true; exposure: Exposure; warnings: string[] } | { ok: false; error: string };

class ExposureError extends Error {}

const DNS_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** A host name as given to --allowed-host, checked and normalised; the error is for people. */
function checkHostName(raw: string, from: string): string {
  const v = raw.trim().toLowerCase();
  if (v.includes('*')) {
    throw new ExposureError(`${from}: "${raw}" is a wildcard; list each host name clients use (a wildcard would let a DNS-rebinding page through)`);
  }
  if (v.includes('://') || v.includes('/')) throw new ExposureError(`${from}: "${raw}" is an address, not a host name (give the name alone, or use --public-url)`);
  const bracketed = /^\[(.+)\]$/.exec(v);
  const name = bracketed ? bracketed[1]! : v;
  if (isIP(name)) {
    if (WILDCARDS.has(name)) throw new ExposureError(`${from}: ${raw} is not an address clients can use; give this machine's name or address`);
    return name;
  }
  if (bracketed) throw new ExposureError(`${from}: "${raw}" is not an IPv6 address`);
  if (/:\d*$/.test(v)) throw new ExposureError(`${from}: "${raw}" has a port; give the host name alone (any port is accepted)`);
  if (!DNS_NAME.test(v)) throw new ExposureError(`${from}: "${raw}" is not a host name`);
  return v;
}

/** A public address (--public-url, --proxy-url): an http(s) origin, nothing after the host and port. */
function checkOrigin(g: Given): URL {
  let u: URL;
  try {
    u = new URL(g.value.trim());
  } catch {
    throw new ExposureError(`${g.from} needs an address such as https://switchyard.example.com`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ExposureError(`${g.from} must start with https:// (or http://)`);
  if (u.username || u.password) throw new ExposureError(`${g.from} must not hold a user name or password`);
  if (u.pathname !== '/' || u.search || u.hash) {
    throw new ExposureError(`${g.from} must be the server's address alone, without a path (e.g. https://switchyard.example.com)`);
  }
  return u;
}

/**
 * The exposure asked for on the command line or in the environment. Refused with a plain error:
 * a host that is not an IP address, a bad name or address, and listening on every interface with
 * no host name allowed (nothing but loopback could then be served, so it is surely a mistake).
 * Warned about: the dashboard or the proxy reached from other machines over plain http.
 */
export function resolveExposure(input: ExposureInput): ExposureResult {
  try {
    let bindHost = LOOPBACK_ONLY.bindHost;
    if (input.host) {
      const v = input.host.value.trim().replace(/^\[(.+)\]$/, '$1');
      if (!isIP(v)) {
        throw new ExposureError(`${input.host.from} needs an IP address to listen on, e.g. 0.0.0.0 (every interface) or 127.0.0.1 (this machine only)`);
      }
      bindHost = v.toLowerCase();
    }
    const publicBind = !isLoopbackName({ name: bindHost, ipv6: bindHost.includes(':') });
    const allowed: string[] = [];
    const allow = (name: string) => {
      if (!allowed.includes(name)) allowed.push(name);
    };
    if (input.allowedHosts) {
      for (const part of input.allowedHosts.value.split(/[\s,]+/).filter(Boolean)) allow(checkHostName(part, input.allowedHosts.from));
    }
    const publicUrl = input.publicUrl ? checkOrigin(input.publicUrl) : null;
    const proxyUrl = input.proxyUrl ? checkOrigin(input.proxyUrl) : null;
    for (const u of [publicUrl, proxyUrl]) {
      const h = u && hostNameOf(u.host);
      if (h && !isLoopbackName(h)) allow(h.name);
    }
    // A specific address is a name clients may use (an IP literal cannot be rebound).
    if (publicBind && !WILDCARDS.has(bindHost)) allow(bindHost);
    if (publicBind && allowed.length === 0) {
      throw new ExposureError(
        `${input.host!.from} ${input.host!.value} listens on every interface, but no host name is allowed, so only this machine could be served: ` +
          'name the host names or addresses clients use with --allowed-host (SWITCHYARD_ALLOWED_HOSTS), or give --public-url',
      );
    }
    const exposure: Exposure = Object.freeze({
      bindHost,
      publicBind,
      allowedHosts: Object.freeze(allowed),
      publicUrl: publicUrl ? publicUrl.origin : null,
      proxyUrl: proxyUrl ? proxyUrl.origin : null,
      secureCookie: publicUrl?.protocol === 'https:',
    });
    const warnings: string[] = [];
    if (publicBind) {
      if (publicUrl?.protocol !== 'https:') {
        warnings.push(
          'the dashboard is reached over plain http: the management token crosses the network unencrypted. Terminate TLS in a reverse proxy and give its https:// address (--public-url or SWITCHYARD_PUBLIC_URL)',
        );
      }
      if (proxyUrl?.protocol !== 'https:') {
        warnings.push(
          'the proxy is reached over plain http: client keys and prompts cross the network unencrypted. Terminate TLS in a reverse proxy and give its https:// address (--proxy-url or SWITCHYARD_PROXY_URL)',
        );
      }
    }
    return { ok: true, exposure, warnings };
  } catch (err) {
    if (err instanceof ExposureError) return { ok: false, error: err.message };
    throw err;
  }
}
