// Team mode for Claude subscription accounts (issue 26, claude/claudeTeam.ts), on an in-memory
// team and a fake clock: an account's low-priority lane is the team's (every instance sends the
// slow header while it is on), and the weekly limit reset is one attempt across the team; the
// others answer from its outcome, or as if skipped when it does not come in time.
import { beforeEach, describe, expect, it } from 'vitest';
import { shareClaudeAccounts } from '../../../src/main/engine/claude/claudeTeam';
import type { HttpFn, HttpRequest } from '../../../src/main/engine/claude/http';
import { LaneController } from '../../../src/main/engine/claude/laneController';
import { LimitResetService, RESET_TEAM_WAIT_MS, type ResetOutcome } from '../../../src/main/engine/claude/limitReset';
import { parseUnifiedHeaders } from '../../../src/main/engine/claude/unifiedHeaders';
import { FakeClock } from '../../support/fakeClock';
import { FakeTeamHub } from './teamFake';

const ORG = '0b5c1f7e-8d3a-4c2e-9f61-2a7d4e5b6c8d';
const API = 'https://claude.example.test';
const U = (h: Record<string, string>) => parseUnifiedHeaders(Object.fromEntries(Object.entries(h).map(([k, v]) => [`anthropic-ratelimit-unified-${k}`, v])));

let clock: FakeClock;
let hub: FakeTeamHub;
/** The account API: usage offers a reset; each reset POST waits until the test answers it. */
let posts: { req: HttpRequest; answer: (result: string) => void }[];
let postArrived: () => void;

beforeEach(() => {
  clock = new FakeClock();
  hub = new FakeTeamHub(clock);
  posts = [];
});

const http: HttpFn = (req) => {
  if (req.method === 'GET') return Promise.resolve({ status: 200, headers: {}, text: JSON.stringify({ juniper_tide: { arm: 'reset', available: true } }) });
  return new Promise((resolve) => {
    posts.push({ req, answer: (result) => resolve({ status: 200, headers: {}, text: JSON.stringify({ result }) }) });
    postArrived?.();
  });
};

/** One instance's Claude side: its lane and limit reset, its local id for the shared account. */
function instance(id: string, localId: string) {
  const team = hub.join(id);
  const lane = new LaneController();
  const reset = new LimitResetService({
    clock,
    http,
    tokens: { token: async () => ({ ok: true, token: 'tok', refreshed: false }), bundle: () => undefined },
  });
  const teamIds = { ofId: (x: string) => (x === localId ? 'c_account' : null), localIds: (t: string) => (t === 'c_account' ? [localId] : []) };
  shareClaudeAccounts({ team, teamIds, clock, lane, reset });
  return { lane, reset, id: localId };
}

const req = (connectionId: string) => ({ connectionId, apiBase: API, organizationUUID: ORG });
const nextPost = () => new Promise<void>((r) => (postArrived = r));

describe('the low-priority lane across the team', () => {
  it('entered on one instance is on for the account everywhere; ended there, it ends everywhere', () => {
    const a = instance('A', 'acct-a');
    const b = instance('B', 'acct-b');
    const limit = U({ status: 'rejected', 'slow-offer': 'treatment' });
    expect(a.lane.apply(a.id, { type: 'limit', unified: limit }, clock.now())).toEqual({ kind: 'retry_slow' });
    hub.flush();
    expect(b.lane.isActive(b.id, clock.now())).toBe(true);
    // B meets the limit too: the lane already holds (no second offer needed, no cooldown).
    expect(b.lane.apply(b.id, { type: 'limit', unified: U({ status: 'rejected' }) }, clock.now())).toEqual({ kind: 'retry_slow' });
    a.lane.apply(a.id, { type: 'slow_response', status: 200, unified: U({ 'slow-status': 'weekly_limit' }) }, clock.now());
    hub.flush();
    expect(b.lane.view(b.id, clock.now())).toMatchObject({ state: 'idle', lastEnd: { reason: 'weekly_limit' } });
  });
});

describe('the weekly limit reset across the team', () => {
  it('is one call: the other instance waits for its outcome and answers with it, then its memo holds everywhere', async () => {
    const a = instance('A', 'acct-a');
    const b = instance('B', 'acct-b');
    const arrived = nextPost();
    const ra = a.reset.tryReset(req(a.id));
    const rb = b.reset.tryReset(req(b.id));
    await arrived;
    expect(posts).toHaveLength(1);
    posts[0]!.answer('reset');
    await expect(ra).resolves.toEqual({ kind: 'reset' });
    hub.flush();
    await expect(rb).resolves.toEqual({ kind: 'reset' });
    expect(hub.claims.size).toBe(0);
    // A week of memo on B too: no second attempt from anyone.
    await expect(b.reset.tryReset(req(b.id))).resolves.toMatchObject({ kind: 'skipped', why: 'memo' });
    expect(posts).toHaveLength(1);
  });

  it('answers as if skipped when the holder’s outcome does not come in time', async () => {
    const a = instance('A', 'acct-a');
    const b = instance('B', 'acct-b');
    const arrived = nextPost();
    void a.reset.tryReset(req(a.id));
    const rb = b.reset.tryReset(req(b.id));
    await arrived;
    let got: ResetOutcome | null = null;
    void rb.then((o) => (got = o));
    clock.advance(RESET_TEAM_WAIT_MS - 1);
    await Promise.resolve();
    expect(got).toBeNull();
    clock.advance(1);
    await expect(rb).resolves.toMatchObject({ kind: 'skipped' });
    expect(posts).toHaveLength(1);
  });

  it('while the team is unreachable each instance decides alone (one attempt per instance)', async () => {
    const a = instance('A', 'acct-a');
    const b = instance('B', 'acct-b');
    hub.down = true;
    let arrived = nextPost();
    const ra = a.reset.tryReset(req(a.id));
    await arrived;
    arrived = nextPost();
    const rb = b.reset.tryReset(req(b.id));
    await arrived;
    expect(posts).toHaveLength(2);
    posts[0]!.answer('reset');
    posts[1]!.answer('already_used');
    await expect(ra).resolves.toEqual({ kind: 'reset' });
    await expect(rb).resolves.toMatchObject({ kind: 'already_used' });
  });
});
