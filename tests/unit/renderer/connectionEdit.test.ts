// Editing a connection in the dashboard: the update the form sends (a PATCH) names only what the
// user changed, so every stored setting the user did not touch reads back exactly as it was, in
// particular the two different concurrency caps (max_concurrent and rateLimitOverrides.maxConcurrent).
import { describe, expect, it } from 'vitest';
import { buildCreateInput, buildUpdateInput, emptyForm, formFromConnection, type ConnectionForm } from '../../../src/renderer/lib/connectionForm';
import type { ConnectionUpdateInput } from '../../../src/shared/contract';
import type { ConnectionView } from '../../../src/shared/model';
import { connection } from './builders';

/** What the engine stores after a PATCH: a field given replaces the stored one, an omitted one stays. */
function patched(stored: ConnectionView, patch: ConnectionUpdateInput): ConnectionView {
  const next = { ...stored } as Record<string, unknown>;
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined || k === 'secret' || k === 'rateLimitProtection' || k === 'rateLimitProtectionMode') continue;
    next[k] = v;
  }
  return next as unknown as ConnectionView;
}

function edit(stored: ConnectionView, change: (f: ConnectionForm) => ConnectionForm): { patch: ConnectionUpdateInput; after: ConnectionView } {
  const r = buildUpdateInput(change(formFromConnection(stored)), stored);
  if (!r.ok) throw new Error(`form refused: ${JSON.stringify(r.errors)}`);
  return { patch: r.input, after: patched(stored, r.input) };
}

const strictOnly = connection({
  kind: 'openai-compatible',
  protocol: 'openai',
  provider: 'glm',
  baseUrl: 'https://glm.example/v1',
  maxConcurrent: null,
  rateLimitOverrides: { maxConcurrent: 2, requestsPerMinute: 30, modelConcurrency: { 'glm-5': 1 } },
});

describe('editing a connection', () => {
  it('a rename leaves a strict cap (rateLimitOverrides.maxConcurrent) where it was', () => {
    const { after } = edit(strictOnly, (f) => ({ ...f, name: 'Renamed' }));
    expect(after.name).toBe('Renamed');
    expect(after.maxConcurrent).toBeNull();
    expect(after.rateLimitOverrides).toEqual({ maxConcurrent: 2, requestsPerMinute: 30, modelConcurrency: { 'glm-5': 1 } });
  });

  it('sends only the fields the user changed', () => {
    expect(edit(strictOnly, (f) => ({ ...f, name: 'Renamed' })).patch).toEqual({ name: 'Renamed' });
    expect(edit(strictOnly, (f) => f).patch).toEqual({});
  });

  it('keeps max_concurrent and the strict cap apart when both are set', () => {
    const both = connection({ maxConcurrent: 3, rateLimitOverrides: { maxConcurrent: 1 } });
    const form = formFromConnection(both);
    expect(form.maxConcurrent).toBe('3');
    expect(form.strictMaxConcurrent).toBe('1');
    const { after } = edit(both, (f) => ({ ...f, priority: '4' }));
    expect(after).toMatchObject({ priority: 4, maxConcurrent: 3, rateLimitOverrides: { maxConcurrent: 1 } });
  });

  it('changing one cap changes only that cap', () => {
    const both = connection({ maxConcurrent: 3, rateLimitOverrides: { maxConcurrent: 1, maxWaitMs: 9_000 } });
    const shared = edit(both, (f) => ({ ...f, maxConcurrent: '5' }));
    expect(shared.patch).toEqual({ maxConcurrent: 5 });
    const strict = edit(both, (f) => ({ ...f, strictMaxConcurrent: '' }));
    expect(strict.after).toMatchObject({ maxConcurrent: 3, rateLimitOverrides: { maxWaitMs: 9_000 } });
    expect(strict.after.rateLimitOverrides).not.toHaveProperty('maxConcurrent');
    const cleared = edit(both, (f) => ({ ...f, maxConcurrent: '' }));
    expect(cleared.patch).toEqual({ maxConcurrent: null });
  });

  it('an edit writes no Claude option, timeout or override the user did not set', () => {
    const claude = connection({ providerSpecificData: { custom: { a: 1 } }, timeouts: { idleMs: 60_000 } });
    const { patch, after } = edit(claude, (f) => ({ ...f, enabled: false }));
    expect(patch).toEqual({ enabled: false });
    expect(after.providerSpecificData).toEqual({ custom: { a: 1 } });
    expect(after.timeouts).toEqual({ idleMs: 60_000 });
  });

  it('a changed Claude option is merged into what is stored', () => {
    const claude = connection({ kind: 'claude-subscription', authClass: 'oauth', providerSpecificData: { organizationUUID: 'org', custom: 1, rotationOverrides: { rateLimitResetSeconds: 90 } } });
    const { patch } = edit(claude, (f) => ({ ...f, autoLimitReset: true }));
    expect(patch).toEqual({
      providerSpecificData: { organizationUUID: 'org', custom: 1, rotationOverrides: { rateLimitResetSeconds: 90 }, autoLimitReset: true },
    });
  });

  it('an emptied override or timeout is removed, the others stay', () => {
    const c = connection({ rateLimitOverrides: { maxWaitMs: 5_000, minTimeMs: 100 }, timeouts: { connectMs: 500, idleMs: 60_000 } });
    const { after } = edit(c, (f) => ({ ...f, minTimeMs: '', connectMs: '' }));
    expect(after.rateLimitOverrides).toEqual({ maxWaitMs: 5_000 });
    expect(after.timeouts).toEqual({ idleMs: 60_000 });
  });

  it('re-typing the stored value, or spacing it differently, is no change', () => {
    const c = connection({ models: ['a', 'b'], rateLimitOverrides: { requestsPerMinute: 1_000 } });
    expect(edit(c, (f) => ({ ...f, models: 'a, b', requestsPerMinute: '1,000' })).patch).toEqual({});
  });

  it('a per-model cap edit keeps the strict connection cap', () => {
    const { after } = edit(strictOnly, (f) => ({ ...f, modelConcurrency: [...f.modelConcurrency, { model: 'glm-4.7', cap: '3' }] }));
    expect(after.rateLimitOverrides).toEqual({ maxConcurrent: 2, requestsPerMinute: 30, modelConcurrency: { 'glm-5': 1, 'glm-4.7': 3 } });
  });

  it('switching kind sends the new kind and, for emptied fields, its defaults', () => {
    const c = connection({ kind: 'openai-compatible', protocol: 'openai', provider: 'glm', authClass: 'apikey', baseUrl: 'https://glm.example/v1' });
    const r = edit(c, (f) => ({ ...f, kind: 'anthropic', authClass: 'apikey', provider: '', baseUrl: '' }));
    expect(r.patch).toEqual({ kind: 'anthropic', provider: 'anthropic', baseUrl: 'https://api.anthropic.com' });
  });

  it('a change made elsewhere while the dialog was open is kept', () => {
    const opened = connection({ priority: 1, rateLimitOverrides: { maxWaitMs: 5_000 } });
    const latest = connection({ priority: 7, rateLimitOverrides: { maxWaitMs: 5_000, maxConcurrent: 4 } });
    const r = buildUpdateInput({ ...formFromConnection(opened), minTimeMs: '50' }, opened, latest);
    expect(r.ok && r.input).toEqual({ rateLimitOverrides: { maxWaitMs: 5_000, maxConcurrent: 4, minTimeMs: 50 } });
  });
});

describe('the two connection caps in the form', () => {
  it('a new connection gets each cap in its own place', () => {
    const r = buildCreateInput({ ...emptyForm('local'), name: 'L', maxConcurrent: '3', strictMaxConcurrent: '1' });
    expect(r.ok && r.input).toMatchObject({ maxConcurrent: 3, rateLimitOverrides: { maxConcurrent: 1 } });
  });

  it('an out-of-range strict cap is refused on its own input', () => {
    const r = buildCreateInput({ ...emptyForm('local'), name: 'L', strictMaxConcurrent: '0' });
    expect(r.ok ? {} : r.errors).toEqual({ 'rateLimitOverrides.maxConcurrent': 'must be between 1 and 100,000' });
  });
});
