// Notifications (issue 23): raising, folding repeats on the fake clock (no storms), the bounded
// feed, per-kind mute, the feed surviving a restart, the state timeline's spans, the subscriptions
// that raise them, and what the desktop shows natively.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NotificationKind } from '../../../src/shared/notifications';
import type { BreakerView, RequestLogEntry } from '../../../src/shared/model';
import { nativeNoticeFor, wireNativeNotifications } from '../../../src/main/desktop/nativeNotifications';
import { EventBus } from '../../../src/main/engine/events';
import { FOLD_WINDOW_MS, NotificationCenter, type RaiseInput } from '../../../src/main/engine/notifications/notificationCenter';
import { StateTimeline } from '../../../src/main/engine/notifications/stateTimeline';
import { watchEngine, WATCH_INTERVAL_MS } from '../../../src/main/engine/notifications/watch';
import { openStore, type Db } from '../../../src/main/engine/store/db';
import { NotificationsRepo, StateSpansRepo } from '../../../src/main/engine/store/notificationsRepo';
import { emptyHealth, type ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';
import { FakeClock } from '../../support/fakeClock';

let dir: string;
let clock: FakeClock;
const dbs: Db[] = [];
const open = () => {
  const db = openStore({ path: join(dir, 'switchyard.db'), now: () => clock.now() });
  dbs.push(db);
  return db;
};
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-notify-'));
  clock = new FakeClock();
});
afterEach(() => {
  for (const db of dbs.splice(0)) if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

const terminal = (subject = 'c-1'): RaiseInput => ({
  kind: 'connection-terminal',
  subject,
  severity: 'error',
  title: 'Key A stopped working',
  body: 'The provider rejected its key.',
  link: '#/connections',
});

function center(db: Db, muted: NotificationKind[] = [], maxItems?: number) {
  return new NotificationCenter(new NotificationsRepo(db), clock, () => muted, { maxItems });
}

describe('the notification feed', () => {
  it('raises an unread item with its link', () => {
    const c = center(open());
    const r = c.raise(terminal());
    expect(r?.folded).toBe(false);
    const feed = c.feed();
    expect(feed.unread).toBe(1);
    expect(feed.items).toEqual([
      expect.objectContaining({ kind: 'connection-terminal', title: 'Key A stopped working', link: '#/connections', count: 1, read: false, at: clock.now(), lastAt: clock.now() }),
    ]);
  });

  it('folds 50 identical events into one item with count 50, and a repeat after the window is a new item', () => {
    const c = center(open());
    const raised: boolean[] = [];
    c.onRaised((r) => raised.push(r.folded));
    const first = clock.now();
    for (let i = 0; i < 50; i++) {
      c.raise(terminal());
      clock.advance(1_000);
    }
    expect(c.feed().items).toHaveLength(1);
    expect(c.feed().items[0]).toMatchObject({ count: 50, at: first, lastAt: first + 49_000 });
    expect(c.feed().unread).toBe(1);
    expect(raised.filter((f) => !f)).toHaveLength(1);
    // Another subject is another item; the same one after the window is a new item.
    c.raise(terminal('c-2'));
    clock.advance(FOLD_WINDOW_MS);
    c.raise(terminal());
    expect(c.feed().items.map((n) => n.count)).toEqual([1, 1, 50]);
  });

  it('keeps a folded item read: a storm does not bring the bell back', () => {
    const c = center(open());
    c.raise(terminal());
    expect(c.markRead('all')).toBe(1);
    c.raise(terminal());
    expect(c.feed()).toMatchObject({ unread: 0, items: [expect.objectContaining({ count: 2, read: true })] });
  });

  it('keeps only the newest items', () => {
    const c = center(open(), [], 3);
    for (let i = 0; i < 5; i++) {
      c.raise(terminal(`c-${i}`));
      clock.advance(1);
    }
    expect(c.feed().items.map((n) => n.title)).toHaveLength(3);
    const again = center(dbs[0]!, [], 3);
    expect(again.feed().items).toHaveLength(3);
  });

  it('does not raise a muted kind, and raises it again once unmuted', () => {
    const muted: NotificationKind[] = ['connection-terminal'];
    const c = new NotificationCenter(new NotificationsRepo(open()), clock, () => muted);
    const seen: unknown[] = [];
    c.onRaised((r) => seen.push(r));
    expect(c.raise(terminal())).toBeNull();
    expect(c.feed()).toMatchObject({ items: [], unread: 0, muted: ['connection-terminal'] });
    expect(seen).toEqual([]);
    muted.length = 0;
    expect(c.raise(terminal())?.folded).toBe(false);
    expect(c.feed().unread).toBe(1);
  });

  it('survives a restart: items, counts and read marks, and folding carries on', () => {
    const db = open();
    const a = center(db);
    a.raise(terminal());
    a.raise(terminal());
    const other = a.raise({ ...terminal('c-2'), title: 'Key B stopped working' })!;
    a.markRead([other.item.id]);
    db.close();

    const b = center(open());
    expect(b.feed().unread).toBe(1);
    expect(b.feed().items.map((n) => [n.title, n.count, n.read])).toEqual([
      ['Key B stopped working', 1, true],
      ['Key A stopped working', 2, false],
    ]);
    clock.advance(60_000);
    expect(b.raise(terminal())?.folded).toBe(true);
    expect(b.feed().items[0]).toMatchObject({ title: 'Key A stopped working', count: 3 });
  });

  it('marks some items or every one read', () => {
    const c = center(open());
    const one = c.raise(terminal('c-1'))!;
    c.raise(terminal('c-2'));
    c.raise(terminal('c-3'));
    expect(c.markRead([one.item.id, 'unknown'])).toBe(1);
    expect(c.feed().unread).toBe(2);
    expect(c.markRead('all')).toBe(2);
    expect(c.feed().unread).toBe(0);
    expect(c.markRead('all')).toBe(0);
  });
});

describe('the state timeline', () => {
  const timeline = (db: Db) => new StateTimeline(new StateSpansRepo(db), clock);
  const names = (id: string) => ({ 'c-1': 'Key A', 'c-2': 'Key B' })[id] ?? null;

  it('opens a span when a state starts and ends it when it goes, at its due time when that came first', () => {
    const t = timeline(open());
    const t0 = clock.now();
    t.observe([{ connectionId: 'c-1', kind: 'cooldown', reason: 'Rate limited', until: t0 + 30_000 }]);
    clock.advance(10_000);
    t.observe([
      { connectionId: 'c-1', kind: 'cooldown', reason: 'Rate limited', until: t0 + 30_000 },
      { connectionId: 'c-2', kind: 'lockout', detail: 'gpt-x', reason: 'gpt-x locked', since: t0 + 5_000, until: t0 + 70_000 },
      { connectionId: 'c-2', kind: 'lockout', detail: 'gpt-y', reason: 'gpt-y locked', until: t0 + 70_000 },
    ]);
    // Nobody looks until long after the cooldown ran out: it still ends at its due time.
    clock.advance(50_000);
    t.observe([{ connectionId: 'c-2', kind: 'lockout', detail: 'gpt-x', reason: 'gpt-x locked', since: t0 + 5_000, until: t0 + 70_000 }]);
    const v = t.view({ from: t0 - 1_000, to: clock.now() + 1 }, names);
    expect(v.connections).toEqual([
      { connectionId: 'c-1', name: 'Key A', spans: [{ kind: 'cooldown', from: t0, to: t0 + 30_000, reason: 'Rate limited' }] },
      {
        connectionId: 'c-2',
        name: 'Key B',
        spans: [
          { kind: 'lockout', from: t0 + 5_000, to: null, reason: 'gpt-x locked' },
          { kind: 'lockout', from: t0 + 10_000, to: t0 + 60_000, reason: 'gpt-y locked' },
        ],
      },
    ]);
    // Past its due time, an open span reads as ended there.
    clock.advance(20_000);
    expect(t.view({ from: t0, to: clock.now() }, names).connections[1]!.spans[0]!.to).toBe(t0 + 70_000);
  });

  it('a span outside the range is left out; a terminal span holds across a restart and ends when fixed', () => {
    const db = open();
    const t0 = clock.now();
    timeline(db).observe([{ connectionId: 'c-1', kind: 'terminal', reason: 'Key rejected or sign-in expired', since: t0 }]);
    db.close();
    clock.advance(3_600_000);
    const t = timeline(open());
    expect(t.view({ from: t0, to: clock.now() }, names).connections[0]!.spans).toEqual([{ kind: 'terminal', from: t0, to: null, reason: 'Key rejected or sign-in expired' }]);
    t.observe([]);
    expect(t.view({ from: t0, to: clock.now() + 1 }, names).connections[0]!.spans[0]!.to).toBe(clock.now());
    expect(t.view({ from: clock.now() + 10, to: clock.now() + 20 }, names).connections).toEqual([]);
    expect(t.view({ from: t0, to: clock.now() + 1 }, () => null).connections[0]!.name).toBe('Removed connection');
  });

  it('deletes spans that ended longer ago than the retention', () => {
    const t = new StateTimeline(new StateSpansRepo(open()), clock, 86_400_000);
    const t0 = clock.now();
    t.observe([{ connectionId: 'c-1', kind: 'disabled', reason: 'Turned off' }]);
    clock.advance(1_000);
    t.observe([]);
    clock.advance(2 * 86_400_000);
    t.observe([]);
    expect(t.view({ from: t0, to: clock.now() }, names).connections).toEqual([]);
  });
});

describe('what raises notifications and records spans', () => {
  const conn = (id: string, name: string, over: Partial<ConnectionRecord['health']> = {}): ConnectionRecord =>
    ({ id, name, provider: 'anthropic', authClass: 'apikey', enabled: true, health: { ...emptyHealth(), ...over } }) as unknown as ConnectionRecord;

  function rig() {
    const db = open();
    const bus = new EventBus();
    const conns = new Map<string, ConnectionRecord>([['c-1', conn('c-1', 'Key A')]]);
    const regListeners = new Set<(kind: 'config' | 'health', ids: string[]) => void>();
    const resListeners = new Set<() => void>();
    let breakers: BreakerView[] = [];
    const registry = {
      all: () => [...conns.values()],
      get: (id: string) => conns.get(id),
      onChange: (fn: (kind: 'config' | 'health', ids: string[]) => void) => (regListeners.add(fn), () => regListeners.delete(fn)),
    };
    const resilience = {
      breakers: () => breakers,
      lockouts: () => [],
      onChange: (fn: () => void) => (resListeners.add(fn), () => resListeners.delete(fn)),
    };
    const c = center(db);
    const t = new StateTimeline(new StateSpansRepo(db), clock);
    const off = watchEngine({ clock, bus, registry, resilience, center: c, timeline: t });
    return {
      bus,
      center: c,
      timeline: t,
      off,
      setHealth(id: string, h: Partial<ConnectionRecord['health']>) {
        conns.set(id, conn(id, conns.get(id)!.name, h));
        regListeners.forEach((fn) => fn('health', [id]));
      },
      setBreaker(b: Partial<BreakerView> | null) {
        breakers = b ? [{ provider: 'anthropic', state: 'OPEN', openedAt: clock.now(), halfOpenAt: clock.now() + 30_000, ...b } as BreakerView] : [];
        resListeners.forEach((fn) => fn());
      },
    };
  }

  it('a connection turning terminal raises one notification linking to Connections, and its span', () => {
    const r = rig();
    r.setHealth('c-1', { testStatus: 'unavailable', rateLimitedUntil: clock.now() + 3_000 });
    expect(r.center.feed().items).toEqual([]);
    clock.advance(3_000);
    r.setHealth('c-1', { testStatus: 'expired', lastErrorAt: clock.now() });
    r.setHealth('c-1', { testStatus: 'expired', lastErrorAt: clock.now() });
    expect(r.center.feed().items).toEqual([expect.objectContaining({ kind: 'connection-terminal', title: 'Key A stopped working', link: '#/connections', count: 1, severity: 'error' })]);
    clock.advance(WATCH_INTERVAL_MS);
    const spans = r.timeline.view({ from: clock.now() - 1_000, to: clock.now() + 1 }, () => 'Key A').connections[0]!.spans;
    expect(spans.map((s) => s.kind)).toEqual(['cooldown', 'terminal']);
    r.off();
  });

  it('a breaker opening raises once (after the burst is looked at), linking to Breakers', () => {
    const r = rig();
    r.setBreaker({ state: 'OPEN' });
    r.setBreaker({ state: 'OPEN' });
    expect(r.center.feed().items).toEqual([]);
    clock.advance(WATCH_INTERVAL_MS);
    expect(r.center.feed().items).toEqual([expect.objectContaining({ kind: 'breaker-opened', link: '#/breakers', count: 1 })]);
    r.setBreaker({ state: 'HALF_OPEN' });
    clock.advance(WATCH_INTERVAL_MS);
    r.setBreaker({ state: 'OPEN' });
    clock.advance(WATCH_INTERVAL_MS);
    // Opened again within the window: folded into the same item.
    expect(r.center.feed().items).toEqual([expect.objectContaining({ kind: 'breaker-opened', count: 2 })]);
    r.off();
  });

  it('a request that nothing could serve raises targets-exhausted linking to its log entry', () => {
    const r = rig();
    const entry = (id: string, errorCode: string, attempts: unknown[] = []) =>
      ({ id, requestedModel: 'claude-x', model: 'claude-x', errorCode, attempts, combo: null }) as unknown as RequestLogEntry;
    r.bus.emit('logs', [entry('req-1', 'all_targets_cooling_down'), entry('req-2', 'upstream_error', [{}]), entry('req-3', 'no_executable_targets', [{}])]);
    expect(r.center.feed().items).toEqual([
      expect.objectContaining({ kind: 'targets-exhausted', title: 'Nothing could serve "claude-x"', link: '#/logs?id=req-1', severity: 'warning' }),
    ]);
    r.off();
  });
});

describe('native notifications (desktop)', () => {
  const item = { id: 'n-1', kind: 'connection-terminal' as const, at: 1, lastAt: 1, count: 1, severity: 'error' as const, title: 'Key A stopped working', body: 'Rejected.', link: '#/connections', read: false };

  it('shows new items only, never folded repeats', () => {
    expect(nativeNoticeFor({ item, folded: false })).toEqual({ title: 'Key A stopped working', body: 'Rejected.', link: '#/connections' });
    expect(nativeNoticeFor({ item: { ...item, count: 2 }, folded: true })).toBeNull();
    expect(nativeNoticeFor({ item: { ...item, link: 'javascript:alert(1)' }, folded: false })?.link).toBe('#/connections');
  });

  it('clicking one focuses the window on its link', () => {
    const shown: { title: string; click?: () => void }[] = [];
    class FakeNotification {
      static isSupported = () => true;
      private readonly rec: { title: string; click?: () => void };
      constructor(o: { title: string; body: string }) {
        this.rec = { title: o.title };
      }
      on(_e: 'click', fn: () => void) {
        this.rec.click = fn;
      }
      show() {
        shown.push(this.rec);
      }
    }
    const c = center(open());
    const focused: string[] = [];
    wireNativeNotifications({ Notification: FakeNotification, onRaised: (fn) => c.onRaised(fn), focusOn: (l) => focused.push(l) });
    c.raise(terminal());
    c.raise(terminal());
    expect(shown.map((s) => s.title)).toEqual(['Key A stopped working']);
    shown[0]!.click!();
    expect(focused).toEqual(['#/connections']);
  });
});
