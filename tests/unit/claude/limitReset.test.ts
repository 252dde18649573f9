// The session-limit reset (R-CLA-16..21): usage GET, then the reset POST, the memo and the backoff.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUndiciHttp } from '../../../src/main/engine/claude/http';
import {
  EMPTY_MEMO,
  LimitResetService,
  memoAfter,
  RESET_BACKOFF_BASE_MS,
  RESET_BACKOFF_MAX_MS,
  resetGate,
} from '../../../src/main/engine/claude/limitReset';
import { ClaudeTokenManager } from '../../../src/main/engine/claude/tokenManager';
import { UsageBook } from '../../../src/main/engine/claude/usageWindows';
import { FakeClock } from '../../support/fakeClock';
import { FakeClaudeAuth } from '../../support/fakeClaudeAuth';
import { configFor } from './support';

const MIN = 60_000;
const WEEK = 7 * 24 * 60 * MIN;
const ORG = '0b0b0b0b-3333-4c4c-8d8d-111122223333';

let fake: FakeClaudeAuth;
let clock: FakeClock;
let tokens: ClaudeTokenManager;
let usage: UsageBook;
let discovered: string[];
let svc: LimitResetService;

beforeEach(async () => {
  fake = await new FakeClaudeAuth().start();
  clock = new FakeClock();
  const http = createUndiciHttp({ timeoutMs: 5_000 });
  tokens = new ClaudeTokenManager({ clock, http, config: () => configFor(fake), persist: () => {} });
  usage = new UsageBook();
  discovered = [];
  svc = new LimitResetService({ clock, http, tokens, usage, onOrganizationDiscovered: (_id, org) => void discovered.push(org) });
  const t = fake.issue();
  tokens.set('a', { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: clock.now() + 60 * MIN });
});

afterEach(() => fake.close());

const req = (over: Partial<Parameters<LimitResetService['tryReset']>[0]> = {}) => ({ connectionId: 'a', apiBase: fake.apiBase, organizationUUID: ORG, ...over });

describe('the reset call', () => {
  it('R-CLA-17: usage GET, then POST reset_rate_limits {"program":"juniper_tide"} for providerSpecificData.organizationUUID', async () => {
    await expect(svc.tryReset(req())).resolves.toEqual({ kind: 'reset' });
    expect(fake.usageCalls).toHaveLength(1);
    expect(fake.usageCalls[0]!.query).toEqual({ at_wall: '1', skip_spend: '1' });
    expect(fake.resetCalls).toHaveLength(1);
    expect(fake.resetCalls[0]!.path).toBe(`/api/organizations/${ORG}/reset_rate_limits`);
    expect(fake.resetCalls[0]!.body).toEqual({ program: 'juniper_tide' });
    // Step 1 also refreshed the usage windows.
    expect(usage.snapshot('a', clock.now())!.fiveHour).toMatchObject({ utilization: 1, source: 'usage_api' });
  });

  it('no POST unless juniper_tide offers arm "reset" and is available; that is memoised like not_offered', async () => {
    fake.usage = { juniper_tide: { arm: 'reset', available: false, next_available_at: '2026-12-05T00:00:00Z' } };
    await expect(svc.tryReset(req())).resolves.toEqual({ kind: 'not_offered', nextAvailableAt: Date.parse('2026-12-05T00:00:00Z') });
    fake.usage = { juniper_tide: { arm: 'other', available: true } };
    const svc2 = new LimitResetService({ clock, http: createUndiciHttp(), tokens });
    await expect(svc2.tryReset(req())).resolves.toEqual({ kind: 'not_offered', nextAvailableAt: clock.now() + WEEK });
    fake.usage = {};
    const svc3 = new LimitResetService({ clock, http: createUndiciHttp(), tokens });
    await expect(svc3.tryReset(req())).resolves.toMatchObject({ kind: 'not_offered' });
    expect(fake.resetCalls).toHaveLength(0);
  });

  it('R-CLA-18: not_limited also says "retry at normal speed" and sets no memo', async () => {
    fake.resetScript.push({ json: { result: 'not_limited' } });
    await expect(svc.tryReset(req())).resolves.toEqual({ kind: 'not_limited' });
    await expect(svc.tryReset(req())).resolves.toEqual({ kind: 'reset' });
  });

  it('R-CLA-19: already_used / not_offered memoise next_available_at (default one week): no calls before it', async () => {
    const at = clock.now() + 3 * 24 * 60 * MIN;
    fake.resetScript.push({ json: { result: 'already_used', next_available_at: new Date(at).toISOString() } });
    await expect(svc.tryReset(req())).resolves.toEqual({ kind: 'already_used', nextAvailableAt: at });
    clock.advance(24 * 60 * MIN);
    await expect(svc.tryReset(req())).resolves.toEqual({ kind: 'skipped', until: at, why: 'memo' });
    expect(fake.usageCalls).toHaveLength(1);
    expect(fake.resetCalls).toHaveLength(1);
    clock.advance(2 * 24 * 60 * MIN);
    fake.resetScript.push({ json: { result: 'not_offered' } });
    await expect(svc.tryReset(req())).resolves.toEqual({ kind: 'not_offered', nextAvailableAt: clock.now() + WEEK });
    expect(svc.view('a')).toMatchObject({ lastResult: 'not_offered', nextAvailableAt: clock.now() + WEEK });
  });

  it('R-CLA-20: an error backs off 15 min, growing with each error in a row up to 4 h', async () => {
    fake.resetScript.push({ status: 500, json: {} });
    const first = await svc.tryReset(req());
    expect(first).toMatchObject({ kind: 'error', backoffUntil: clock.now() + 15 * MIN });
    clock.advance(15 * MIN - 1);
    await expect(svc.tryReset(req())).resolves.toMatchObject({ kind: 'skipped', why: 'backoff' });
    expect(fake.resetCalls).toHaveLength(1);
    clock.advance(1);
    fake.usageScript.push({ status: 503, json: {} });
    await expect(svc.tryReset(req())).resolves.toMatchObject({ kind: 'error', backoffUntil: clock.now() + 30 * MIN });
    let m = EMPTY_MEMO;
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      m = memoAfter(m, { kind: 'error', message: 'x' }, 0);
      seen.push(m.backoffUntil!);
    }
    expect(seen).toEqual([RESET_BACKOFF_BASE_MS, 30 * MIN, 60 * MIN, 120 * MIN, RESET_BACKOFF_MAX_MS, RESET_BACKOFF_MAX_MS]);
    // A good answer resets the growth.
    m = memoAfter(m, { kind: 'answer', result: 'not_limited', nextAvailableAt: null }, 0);
    expect(m.errors).toBe(0);
    expect(resetGate(m, 1)).toEqual({ ok: true });
  });

  it('R-CLA-21: after a reset, no other attempt for a week even if the server offers one sooner', async () => {
    fake.resetScript.push({ json: { result: 'reset', next_available_at: new Date(clock.now() + 60 * MIN).toISOString() } });
    await svc.tryReset(req());
    clock.advance(WEEK - 1);
    await expect(svc.tryReset(req())).resolves.toMatchObject({ kind: 'skipped', why: 'memo' });
    clock.advance(1);
    await expect(svc.tryReset(req())).resolves.toEqual({ kind: 'reset' });
    expect(fake.resetCalls).toHaveLength(2);
  });

  it('concurrent limit 429s share one attempt', async () => {
    const rs = await Promise.all(Array.from({ length: 10 }, () => svc.tryReset(req())));
    expect(rs.every((r) => r.kind === 'reset')).toBe(true);
    expect(fake.usageCalls).toHaveLength(1);
    expect(fake.resetCalls).toHaveLength(1);
  });

  it('no usable token is an error with backoff, and no call is made', async () => {
    tokens.set('a', { accessToken: 'dead-token-xyz123', refreshToken: null, expiresAt: clock.now() - 1 });
    await expect(svc.tryReset(req())).resolves.toMatchObject({ kind: 'error' });
    expect(fake.usageCalls).toHaveLength(0);
  });
});

describe('organization UUID', () => {
  it('falls back to the one the token endpoint named (kept in the bundle)', async () => {
    const t = fake.issue();
    tokens.set('a', { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: clock.now() + 60 * MIN, organizationUUID: fake.organizationUUID });
    await svc.tryReset(req({ organizationUUID: null }));
    expect(fake.resetCalls[0]!.path).toBe(`/api/organizations/${fake.organizationUUID}/reset_rate_limits`);
    expect(fake.profileCalls).toHaveLength(0);
  });

  it('else discovers it once through the profile, reports it and remembers it', async () => {
    await svc.tryReset(req({ organizationUUID: '' }));
    expect(fake.profileCalls).toHaveLength(1);
    expect(discovered).toEqual([fake.organizationUUID]);
    expect(fake.resetCalls[0]!.path).toBe(`/api/organizations/${fake.organizationUUID}/reset_rate_limits`);
    clock.advance(WEEK);
    await svc.tryReset(req({ organizationUUID: undefined }));
    expect(fake.profileCalls).toHaveLength(1);
  });

  it('a profile without an organization is an error with backoff', async () => {
    const http = createUndiciHttp();
    const noOrg = new LimitResetService({
      clock,
      http: async (r) => (r.url.endsWith('/api/oauth/profile') ? { status: 200, headers: {}, text: '{"account":{}}' } : http(r)),
      tokens,
    });
    await expect(noOrg.tryReset(req({ organizationUUID: null }))).resolves.toMatchObject({ kind: 'error', message: expect.stringMatching(/organization/) });
    expect(fake.resetCalls).toHaveLength(0);
  });
});
