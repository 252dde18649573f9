// Session affinity (issue 14, SPEC §2c): a session's requests stay on one connection out of
// three while it is eligible; a 429 on it fails over and the session re-pins where it was
// served; pins survive a restart; TTL 0 turns it off; combos pin their target; no session header
// reaches an upstream.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { accountLimited, rigPerTest } from '../resilience/support';
import { claudeCode, ENV, KEYS, PROXY_ONLY_HEADERS, say, trio } from './support';

const SESSION = '3f8a2c1e-7b4d-4e2a-9c61-0d5e8f7a1b23';

describe('session affinity', () => {
  const { fake, startRig } = rigPerTest();

  it('30 requests of one Claude Code session all reach one connection out of three (round-robin spreads the rest)', async () => {
    const { rig, conns } = await trio(await startRig({ env: ENV }));
    const plain = new Set<string | null>();
    for (let i = 0; i < 3; i++) plain.add((await say(rig.client)).selected);
    expect(plain.size).toBe(3);

    const served: (string | null)[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await say(rig.client, claudeCode(SESSION));
      expect(r.status).toBe(200);
      served.push(r.selected);
    }
    expect(new Set(served).size).toBe(1);
    expect(conns.map((c) => c.id)).toContain(served[0]);
    // Another session is spread as usual: it is not stuck to the first one's connection.
    const other = new Set<string | null>();
    for (let i = 0; i < 3; i++) other.add((await say(rig.client)).selected);
    expect(other.size).toBe(3);

    const log = await rig.t.api.listLogs({ limit: 4 });
    const followed = log.entries.find((e) => e.affinity?.session === SESSION)!;
    expect(followed.affinity).toMatchObject({ source: 'x-claude-code-session-id', pin: 'followed', result: 'kept', pinnedConnectionId: served[0] });
    expect(followed.attempts[0]!.via).toBe('pin');
    const view = await rig.t.api.listSessions();
    expect(view.sessions).toHaveLength(1);
    expect(view.sessions[0]).toMatchObject({ session: SESSION, source: 'x-claude-code-session-id', connectionId: served[0], clientKeyName: 'Default' });
  });

  it('the pinned connection answers 429: the request fails over and the session re-pins where it was served', async () => {
    const { rig, conns } = await trio(await startRig({ env: ENV }));
    const first = await say(rig.client, claudeCode(SESSION));
    const pinned = first.selected!;
    const pinnedKey = KEYS[conns.findIndex((c) => c.id === pinned)]!;
    fake.script({ key: pinnedKey }, [accountLimited({ 'retry-after': '30' })], { repeatLast: false });

    const failover = await say(rig.client, claudeCode(SESSION));
    expect(failover.status).toBe(200);
    expect(failover.selected).not.toBe(pinned);
    const repinned = failover.selected!;
    const log = await rig.t.api.listLogs({ limit: 1 });
    expect(log.entries[0]!.affinity).toMatchObject({ pin: 'followed', result: 'moved', pinnedConnectionId: pinned });
    expect(log.entries[0]!.attempts.map((a) => [a.connectionId, a.status, a.via ?? null])).toEqual([
      [pinned, 429, 'pin'],
      [repinned, 200, null],
    ]);

    // While the first connection cools, the pin is elsewhere; after its cooldown the session stays put.
    for (let i = 0; i < 5; i++) expect((await say(rig.client, claudeCode(SESSION))).selected).toBe(repinned);
    rig.clock.advance(31_000);
    for (let i = 0; i < 5; i++) expect((await say(rig.client, claudeCode(SESSION))).selected).toBe(repinned);
    // Its first request and the 429: nothing since.
    expect(fake.requestsFor({ key: pinnedKey })).toHaveLength(2);
  });

  it('a pinned connection that is cooling is bypassed before any call: the request goes to the next one and re-pins', async () => {
    const { rig, conns } = await trio(await startRig({ env: ENV }));
    const pinned = (await say(rig.client, claudeCode(SESSION))).selected!;
    const pinnedKey = KEYS[conns.findIndex((c) => c.id === pinned)]!;
    // Another session's request cools the pinned connection (account-wide 429).
    fake.script({ key: pinnedKey }, [accountLimited({ 'retry-after': '60' })], { repeatLast: false });
    for (let i = 0; i < 3 && fake.requestsFor({ key: pinnedKey }).length < 2; i++) await say(rig.client);
    expect(fake.requestsFor({ key: pinnedKey })).toHaveLength(2);

    const r = await say(rig.client, claudeCode(SESSION));
    expect(r.status).toBe(200);
    expect(r.selected).not.toBe(pinned);
    expect(fake.requestsFor({ key: pinnedKey })).toHaveLength(2);
    const log = await rig.t.api.listLogs({ limit: 1 });
    expect(log.entries[0]!.affinity).toMatchObject({ pin: 'bypassed', reason: 'cooling_down', result: 'moved' });
    expect((await rig.t.api.listSessions()).sessions[0]!.connectionId).toBe(r.selected);
  });

  it('a restart keeps the pins', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-affinity-'));
    try {
      const rig = await startRig({ env: ENV, dataDir });
      const { conns } = await trio(rig);
      await say(rig.client); // round-robin: the session's first request goes to the second connection
      const pinned = (await say(rig.client, claudeCode(SESSION))).selected!;
      expect(pinned).toBe(conns[1]!.id);
      await rig.stop();

      const again = await startRig({ env: ENV, dataDir });
      // After a restart round-robin starts over at the first connection (and would go on turning);
      // the pinned session stays on the second.
      const client = new Anthropic({ baseURL: again.t.proxyUrl, apiKey: again.t.clientKey, maxRetries: 0 });
      expect((await say(client)).selected).toBe(conns[0]!.id);
      for (let i = 0; i < 4; i++) expect((await say(client, claudeCode(SESSION))).selected).toBe(pinned);
      await again.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('TTL 0 turns affinity off: the same session is spread like any request', async () => {
    const { rig } = await trio(await startRig({ env: ENV }));
    await rig.t.api.patchSettings({ patch: { sessionAffinityTtlMs: 0 } });
    const seen = new Set<string | null>();
    for (let i = 0; i < 3; i++) seen.add((await say(rig.client, claudeCode(SESSION))).selected);
    expect(seen.size).toBe(3);
    expect((await rig.t.api.listSessions()).sessions).toHaveLength(0);
    const log = await rig.t.api.listLogs({ limit: 1 });
    expect(log.entries[0]!.affinity ?? null).toBeNull();
  });

  it('the TTL slides with use and a session idle past it is picked afresh', async () => {
    const { rig } = await trio(await startRig({ env: ENV }));
    await rig.t.api.patchSettings({ patch: { sessionAffinityTtlMs: 2_000 } });
    const pinned = (await say(rig.client, claudeCode(SESSION))).selected!;
    for (let i = 0; i < 3; i++) {
      rig.clock.advance(1_500);
      expect((await say(rig.client, claudeCode(SESSION))).selected).toBe(pinned);
    }
    rig.clock.advance(2_001);
    const log = async () => (await rig.t.api.listLogs({ limit: 1 })).entries[0]!.affinity;
    await say(rig.client, claudeCode(SESSION));
    expect(await log()).toMatchObject({ pin: 'none', result: 'created' });
  });

  it('each session header (and the metadata.user_id fallback) pins, on any provider, in the documented precedence', async () => {
    const { rig } = await trio(await startRig({ env: ENV }));
    const cases: [Record<string, string>, string][] = [
      [{ 'X-Session-Id': 's-generic' }, 'x-session-id'],
      [{ 'x-codex-session-id': 's-codex' }, 'x-codex-session-id'],
      [{ 'x-omniroute-session': 's-omni' }, 'x-omniroute-session'],
      [{ 'X-Switchyard-Session': 's-switchyard' }, 'x-switchyard-session'],
      [{ session_id: 's-codex-cli' }, 'session_id'],
      [{ 'X-Switchyard-Session': 's-wins', 'X-Session-Id': 's-loses', 'X-Claude-Code-Session-Id': 's-loses-too' }, 'x-switchyard-session'],
    ];
    for (const [headers, source] of cases) {
      const seen = new Set<string | null>();
      for (let i = 0; i < 4; i++) seen.add((await say(rig.client, headers)).selected);
      expect(seen.size, JSON.stringify(headers)).toBe(1);
      expect((await rig.t.api.listLogs({ limit: 1 })).entries[0]!.affinity?.source).toBe(source);
    }
    const sessions = (await rig.t.api.listSessions()).sessions.map((s) => s.session);
    expect(sessions).toContain('s-wins');
    expect(sessions).not.toContain('s-loses');

    const seen = new Set<string | null>();
    for (let i = 0; i < 4; i++) {
      const { response } = await rig.client.messages
        .create({
          model: 'claude-x',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'hi' }],
          metadata: { user_id: `user_${'ab'.repeat(32)}_account_1b2c3d4e-0000-4000-8000-000000000000_session_${SESSION}` },
        })
        .withResponse();
      seen.add(response.headers.get('x-switchyard-selected-connection-id'));
    }
    expect(seen.size).toBe(1);
    expect((await rig.t.api.listLogs({ limit: 1 })).entries[0]!.affinity).toMatchObject({ source: 'metadata.user_id', session: SESSION });
  });

  it('sessions are scoped by client key: the same id from another key is another session', async () => {
    const { rig } = await trio(await startRig({ env: ENV }));
    const other = await rig.t.api.createClientKey({ name: 'Second' });
    const second = new Anthropic({ baseURL: rig.t.proxyUrl, apiKey: other.secret, maxRetries: 0 });
    await say(rig.client, claudeCode(SESSION));
    await say(second, claudeCode(SESSION));
    const view = await rig.t.api.listSessions();
    expect(view.sessions.map((s) => s.clientKeyName).sort()).toEqual(['Default', 'Second']);
  });

  it('no session or lease header ever reaches an upstream', async () => {
    const { rig } = await trio(await startRig({ env: ENV }));
    const all = Object.fromEntries(PROXY_ONLY_HEADERS.filter((h) => !h.includes('lease')).map((h) => [h, 'session-value-1']));
    for (let i = 0; i < 3; i++) expect((await say(rig.client, all)).status).toBe(200);
    expect(fake.requests.length).toBeGreaterThan(0);
    for (const r of fake.requests) for (const h of PROXY_ONLY_HEADERS) expect(r.headers[h], h).toBeUndefined();
  });

  it('forgetting a session from the dashboard API routes its next request as new', async () => {
    const { rig } = await trio(await startRig({ env: ENV }));
    await say(rig.client, claudeCode(SESSION));
    const [pin] = (await rig.t.api.listSessions()).sessions;
    expect(await rig.t.api.forgetSession({ id: pin!.id })).toEqual({ forgotten: true });
    expect((await rig.t.api.listSessions()).sessions).toHaveLength(0);
    await expect(rig.t.api.forgetSession({ id: pin!.id })).rejects.toMatchObject({ status: 404 });
    await say(rig.client, claudeCode(SESSION));
    expect((await rig.t.api.listLogs({ limit: 1 })).entries[0]!.affinity).toMatchObject({ pin: 'none', result: 'created' });
  });
});
