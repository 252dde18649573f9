// Notifications through the proxy (issue 23): a key the fake upstream keeps rejecting (401), asked
// through the proxy with the real Anthropic SDK, turns the connection terminal; the feed then holds
// one "connection stopped working" item linking to the Connections page, the next request that
// nothing can serve raises one linking to its log entry, and the state timeline shows the spans.
import { describe, expect, it } from 'vitest';
import { anthropicError, ask, cooldownOf, rigPerTest } from '../resilience/support';

const KA = 'sk-ant-key-aaaaaaaaaaaa';

describe('notifications', () => {
  const { fake, startRig } = rigPerTest();

  it('a rejected key raises a connection-terminal notification linking to Connections', async () => {
    const r = await startRig();
    const a = await r.add('Key A', KA);
    const t0 = r.clock.now();
    fake.script({ key: KA }, [anthropicError(401, 'authentication_error', 'invalid x-api-key')]);
    for (let i = 0; i < 3; i++) {
      await ask(r.client);
      const cd = await cooldownOf(r.t, a.id);
      r.clock.advance(Math.max(cd.remainingMs, 200));
    }
    expect((await cooldownOf(r.t, a.id)).status).toBe('expired');

    const feed = await r.t.api.listNotifications();
    expect(feed.unread).toBe(1);
    expect(feed.items).toEqual([
      expect.objectContaining({ kind: 'connection-terminal', title: 'Key A stopped working', link: '#/connections', severity: 'error', count: 1, read: false }),
    ]);

    // Nothing can serve the model now: one more item, linking to that request in the log.
    const answer = await ask(r.client);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    r.clock.advance(1_000);
    const after = await r.t.api.listNotifications();
    const exhausted = after.items.find((n) => n.kind === 'targets-exhausted');
    expect(exhausted).toMatchObject({ title: 'Nothing could serve "claude-x"' });
    expect(exhausted!.link).toMatch(/^#\/logs\?id=/);
    const logId = decodeURIComponent(exhausted!.link.slice('#/logs?id='.length));
    expect((await r.t.api.getLog({ id: logId })).errorCode).toBe('no_executable_targets');

    // Marked read through the API.
    expect(await r.t.api.markNotificationsRead({ all: true })).toEqual({ marked: 2, unread: 0 });

    // The timeline: two cooldowns, then out of service (still holding).
    const tl = await r.t.api.getStateTimeline({ from: t0, to: r.clock.now() + 1 });
    const spans = tl.connections.find((c) => c.connectionId === a.id)!.spans;
    expect(spans.map((s) => s.kind)).toEqual(['cooldown', 'cooldown', 'terminal']);
    expect(spans.at(-1)!.to).toBeNull();
    expect(spans[0]!.to).not.toBeNull();
  });

  it('a muted kind raises nothing', async () => {
    const r = await startRig();
    await r.t.api.patchSettings({ patch: { 'notifications.muted': ['connection-terminal'] } });
    const a = await r.add('Key A', KA);
    fake.script({ key: KA }, [anthropicError(401, 'authentication_error', 'invalid x-api-key')]);
    for (let i = 0; i < 3; i++) {
      await ask(r.client);
      r.clock.advance(Math.max((await cooldownOf(r.t, a.id)).remainingMs, 200));
    }
    expect((await cooldownOf(r.t, a.id)).status).toBe('expired');
    const feed = await r.t.api.listNotifications();
    expect(feed.muted).toEqual(['connection-terminal']);
    expect(feed.items.filter((n) => n.kind === 'connection-terminal')).toEqual([]);
  });
});
