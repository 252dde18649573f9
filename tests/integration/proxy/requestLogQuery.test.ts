// The request log as the dashboard reads it (issue 22), through the proxy with the real SDKs: the
// model asked for and the one served when a mapping rewrote it, the client key's name, the request
// id agents receive as x-switchyard-request-id, a queue wait with its reason, and the filters
// (status class, exact id, text, time range) applied by the engine through the management API.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../../src/shared/model';
import { FakeUpstream } from '../../support/fakeUpstream';
import { ONE_ANSWER_ENV, startTestEngine, type TestEngine } from '../../support/harness';
import { rateLimited, waitForAdmission } from '../admission/support';

describe('request log: models, key, id, waits and filters', () => {
  let fake: FakeUpstream;
  let t: TestEngine;
  const ids: Record<'trigger' | 'waited' | 'mapped' | 'refused', string> = { trigger: '', waited: '', mapped: '', refused: '' };
  let openaiConn = '';

  const byId = async (id: string): Promise<RequestLogEntry> => {
    const page = await t.api.listLogs({ requestId: id });
    expect(page.entries).toHaveLength(1);
    return page.entries[0]!;
  };
  const idsOf = (page: { entries: RequestLogEntry[] }) => page.entries.map((e) => e.id).sort();

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine({ env: ONE_ANSWER_ENV });
    const conn = await t.addConnection({
      name: 'Acme main',
      kind: 'openai-compatible',
      provider: 'acme',
      baseUrl: fake.openaiUrl,
      secret: 'sk-acme-xxxxxxxxxxxx',
      authClass: 'apikey',
      disableCooling: true,
    });
    openaiConn = conn.id;
    await t.addConnection({ name: 'Anthro', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-xxxxxxxxxxxx' });
    await t.api.routeAgentModels({ pattern: 'team-alias-*', connectionId: conn.id, model: 'acme-large' });
    const { secret } = await t.api.createClientKey({ name: 'Build robot' });
    const openai = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: secret, maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });

    // 1. A 429 with a retry hint pauses the connection's queue; the next request waits it out.
    fake.script({ model: 'trigger' }, [rateLimited(1_200)]);
    const trig = await openai.chat.completions.create({ model: 'trigger', messages: [{ role: 'user', content: 'hi' }] }).withResponse().catch((e: unknown) => e);
    expect(trig).toBeInstanceOf(OpenAI.APIError);
    ids.trigger = (trig as InstanceType<typeof OpenAI.APIError>).headers!.get('x-switchyard-request-id')!;
    await waitForAdmission(t, conn.id, (v) => v.pausedUntil !== null);
    const waited = await openai.chat.completions.create({ model: 'work', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    ids.waited = waited.response.headers.get('x-switchyard-request-id')!;

    // 2. Later (the wait above took over a second): a mapped model, and a refused Messages call.
    const mapped = await openai.chat.completions.create({ model: 'team-alias-7', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    ids.mapped = mapped.response.headers.get('x-switchyard-request-id')!;
    fake.script({ model: 'claude-refused' }, [{ status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is malformed' } } }]);
    const refused = await anthropic.messages
      .create({ model: 'claude-refused', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.APIError);
    ids.refused = (refused as InstanceType<typeof Anthropic.APIError>).headers!.get('x-switchyard-request-id')!;
    for (const v of Object.values(ids)) expect(v).toMatch(/\S/);
  });
  afterAll(async () => {
    await t?.stop();
    await fake?.close();
  });

  it('records the model asked for and the model a mapping served, by the id the client received', async () => {
    const e = await byId(ids.mapped);
    expect(e).toMatchObject({ id: ids.mapped, requestedModel: 'team-alias-7', model: 'acme-large', connectionName: 'Acme main', status: 200 });
    expect(fake.requestsFor({ model: 'acme-large' })).toHaveLength(1);
  });

  it("records the client key's name", async () => {
    expect((await byId(ids.mapped)).clientKeyName).toBe('Build robot');
    const other = await byId(ids.refused);
    expect(other.clientKeyName).not.toBe('Build robot');
    expect(other.clientKeyName).toMatch(/\S/);
  });

  it('records a queue wait with its reason: the pause the upstream asked for', async () => {
    const e = await byId(ids.waited);
    expect(e.status).toBe(200);
    expect(e.waits).toHaveLength(1);
    const w = e.waits![0]!;
    expect(w).toMatchObject({ reason: 'queue_paused', connectionId: openaiConn, connectionName: 'Acme main', model: 'work', attempt: 1 });
    expect(w.ms).toBeGreaterThan(0);
    expect(w.until).toBeGreaterThan(e.startedAt);
    // A request that waited for nothing lists no wait.
    expect((await byId(ids.mapped)).waits).toEqual([]);
  });

  it('filters by status class', async () => {
    const all = [ids.trigger, ids.waited, ids.mapped, ids.refused].sort();
    expect(idsOf(await t.api.listLogs({}))).toEqual(all);
    expect(idsOf(await t.api.listLogs({ status: 'ok' }))).toEqual([ids.waited, ids.mapped].sort());
    expect(idsOf(await t.api.listLogs({ status: 'failed' }))).toEqual([ids.trigger, ids.refused].sort());
    expect(idsOf(await t.api.listLogs({ status: 'rate_limited' }))).toEqual([ids.trigger]);
    expect(idsOf(await t.api.listLogs({ status: 'client_error' }))).toEqual([ids.refused]);
    expect(idsOf(await t.api.listLogs({ status: 'server_error' }))).toEqual([]);
  });

  it('finds a request by its exact id, and by text in its id, model, connection or key name', async () => {
    expect(idsOf(await t.api.listLogs({ requestId: ids.refused }))).toEqual([ids.refused]);
    expect(idsOf(await t.api.listLogs({ requestId: 'req_does_not_exist' }))).toEqual([]);
    expect(idsOf(await t.api.listLogs({ search: ids.waited }))).toEqual([ids.waited]);
    expect(idsOf(await t.api.listLogs({ search: 'TEAM-ALIAS' }))).toEqual([ids.mapped]);
    expect(idsOf(await t.api.listLogs({ search: 'build robot' }))).toEqual([ids.trigger, ids.waited, ids.mapped].sort());
    expect(idsOf(await t.api.listLogs({ search: 'claude-refused' }))).toEqual([ids.refused]);
    // LIKE's own characters are literal text.
    expect(idsOf(await t.api.listLogs({ search: '%' }))).toEqual([]);
    // Filters combine.
    expect(idsOf(await t.api.listLogs({ search: 'build robot', status: 'failed' }))).toEqual([ids.trigger]);
  });

  it('filters by time range, and refuses a range that ends before it starts', async () => {
    const trigger = await byId(ids.trigger);
    const waited = await byId(ids.waited);
    const mapped = await byId(ids.mapped);
    const refused = await byId(ids.refused);
    expect(mapped.startedAt).toBeGreaterThan(waited.startedAt);
    expect(idsOf(await t.api.listLogs({ from: mapped.startedAt }))).toEqual([ids.mapped, ids.refused].sort());
    expect(idsOf(await t.api.listLogs({ to: waited.startedAt }))).toEqual([ids.trigger, ids.waited].sort());
    expect(idsOf(await t.api.listLogs({ from: trigger.startedAt, to: refused.startedAt }))).toHaveLength(4);
    await expect(t.api.listLogs({ from: refused.startedAt, to: trigger.startedAt - 1 })).rejects.toThrow(/start of the time range is after its end/);
  });
});
