// The Claude account API next to the Messages API: `GET /api/oauth/usage` (usage windows and the
// `juniper_tide` limit-reset offer), `GET /api/oauth/profile` (the account's organization) and
// `POST /api/organizations/{orgUUID}/reset_rate_limits` (R-CLA-17). Each call has the OAuth
// bearer and beta header a Claude subscription needs; answers are parsed liberally into strict types.
import { HttpTransportError, jsonBody, type HttpFn, type HttpResponse } from './http';
import { isObject, parseInstant, UUIDISH } from './tokenBundle';
import type { UsageWindowsAnswer } from './usageWindows';

export const OAUTH_BETA = 'oauth-2025-04-20';

export interface JuniperTide {
  /** "reset" when the offer is the session-limit reset. */
  arm: string | null;
  available: boolean;
  nextAvailableAt: number | null;
}

export interface UsageAnswer extends UsageWindowsAnswer {
  juniperTide: JuniperTide | null;
}

export const RESET_RESULTS = ['reset', 'not_limited', 'already_used', 'not_offered'] as const;
export type ResetResult = (typeof RESET_RESULTS)[number];

export interface ResetAnswer {
  /** null when the answer names no result we know (treated as an error). */
  result: ResetResult | null;
  nextAvailableAt: number | null;
}

export interface AccountCall {
  /** Origin, e.g. https://api.anthropic.com (see accountApiBase). */
  apiBase: string;
  accessToken: string;
  signal?: AbortSignal;
}

/** The call failed (no answer, a non-2xx status, or an answer we cannot read). */
export class AccountApiError extends Error {
  constructor(
    readonly kind: 'network' | 'http' | 'malformed',
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'AccountApiError';
  }
}

function headers(token: string, json: boolean): Record<string, string> {
  const h: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'anthropic-beta': OAUTH_BETA,
    'anthropic-version': '2023-06-01',
    accept: 'application/json',
  };
  if (json) h['content-type'] = 'application/json';
  return h;
}

async function call(http: HttpFn, what: string, req: Parameters<HttpFn>[0]): Promise<unknown> {
  let res: HttpResponse;
  try {
    res = await http(req);
  } catch (err) {
    throw new AccountApiError('network', `${what}: ${err instanceof HttpTransportError ? err.message : 'network error'}`);
  }
  if (res.status < 200 || res.status >= 300) throw new AccountApiError('http', `${what} answered HTTP ${res.status}`, res.status);
  const body = jsonBody(res);
  if (!isObject(body)) throw new AccountApiError('malformed', `${what} answered something other than a JSON object`, res.status);
  return body;
}

/** R-CLA-17 step 1: `GET /api/oauth/usage?at_wall=1&skip_spend=1`. */
export async function fetchUsage(http: HttpFn, c: AccountCall): Promise<UsageAnswer> {
  const body = (await call(http, 'the usage call', {
    method: 'GET',
    url: `${c.apiBase}/api/oauth/usage?at_wall=1&skip_spend=1`,
    headers: headers(c.accessToken, false),
    signal: c.signal,
  })) as Record<string, unknown>;
  return {
    fiveHour: usageWindow(body.five_hour),
    sevenDay: usageWindow(body.seven_day),
    juniperTide: juniperTide(body.juniper_tide),
  };
}

/** The account's organization, from `GET /api/oauth/profile` (`organization.uuid`). */
export async function fetchOrganizationUUID(http: HttpFn, c: AccountCall): Promise<string | null> {
  const body = (await call(http, 'the profile call', {
    method: 'GET',
    url: `${c.apiBase}/api/oauth/profile`,
    headers: headers(c.accessToken, false),
    signal: c.signal,
  })) as Record<string, unknown>;
  const org = isObject(body.organization) ? body.organization.uuid : undefined;
  return typeof org === 'string' && UUIDISH.test(org) ? org : null;
}

/** R-CLA-17 step 2: `POST /api/organizations/{orgUUID}/reset_rate_limits` `{"program":"juniper_tide"}`. */
export async function postResetRateLimits(http: HttpFn, c: AccountCall & { organizationUUID: string }): Promise<ResetAnswer> {
  const body = (await call(http, 'the limit reset call', {
    method: 'POST',
    url: `${c.apiBase}/api/organizations/${encodeURIComponent(c.organizationUUID)}/reset_rate_limits`,
    headers: headers(c.accessToken, true),
    body: JSON.stringify({ program: 'juniper_tide' }),
    signal: c.signal,
  })) as Record<string, unknown>;
  const r = typeof body.result === 'string' ? body.result.trim().toLowerCase() : null;
  return {
    result: (RESET_RESULTS as readonly string[]).includes(r ?? '') ? (r as ResetResult) : null,
    nextAvailableAt: instantOrNull(body.next_available_at),
  };
}

function instantOrNull(v: unknown): number | null {
  const t = parseInstant(v);
  return typeof t === 'number' ? t : null;
}

/** The usage answer's windows: utilization in percent (0-100), `resets_at` ISO or epoch. */
function usageWindow(v: unknown): { utilization: number; resetsAt: number | null } | null {
  if (!isObject(v)) return null;
  const u = typeof v.utilization === 'number' ? v.utilization : Number(v.utilization);
  if (!Number.isFinite(u)) return null;
  return { utilization: Math.min(1, Math.max(0, u / 100)), resetsAt: instantOrNull(v.resets_at) };
}

function juniperTide(v: unknown): JuniperTide | null {
  if (!isObject(v)) return null;
  return {
    arm: typeof v.arm === 'string' ? v.arm.trim().toLowerCase() : null,
    available: v.available === true || v.available === 'true',
    nextAvailableAt: instantOrNull(v.next_available_at),
  };
}
