// Team mode's notifications (notifications/teamNotices.ts): raised when the link degrades (from
// connected, or at start) and when it recovers, never for a repeat of the same state, in words that
// carry the reason and lead to the Team page.
import { describe, expect, it } from 'vitest';
import type { TeamStatus } from '../../../src/main/engine/team';
import { findJargon } from '../../e2e/jargon';
import { teamConfigNotice, watchTeamLink } from '../../../src/main/engine/notifications/teamNotices';
import type { RaiseInput } from '../../../src/main/engine/notifications/notificationCenter';

function fakeTeam(state: TeamStatus['state']) {
  let status: TeamStatus = { state, since: 0, lastError: null, address: 'redis://x', team: 'acme', instanceId: 'i', pending: 0 };
  const fns = new Set<(s: TeamStatus) => void>();
  return {
    status: () => status,
    onStatus: (fn: (s: TeamStatus) => void) => {
      fns.add(fn);
      return () => fns.delete(fn);
    },
    set(state: TeamStatus['state'], lastError: string | null = null) {
      status = { ...status, state, lastError };
      fns.forEach((fn) => fn(status));
    },
    listeners: () => fns.size,
  };
}

describe('team link notifications', () => {
  it('tell when the link is lost and when it is back, once per change', () => {
    const team = fakeTeam('connected');
    const raised: RaiseInput[] = [];
    const off = watchTeamLink(team, (n) => raised.push(n));
    team.set('degraded', 'Redis refused the connection');
    team.set('degraded', 'Redis refused the connection');
    team.set('connected');
    team.set('connected');
    expect(raised.map((n) => [n.kind, n.severity, n.title])).toEqual([
      ['team-link', 'warning', 'Lost the link to the team'],
      ['team-link', 'info', 'Back in touch with the team "acme"'],
    ]);
    expect(raised[0]!.body).toContain('Redis refused the connection');
    expect(raised.every((n) => n.link === '#/team')).toBe(true);
    for (const n of [...raised, teamConfigNotice('The key does not match.')]) expect(findJargon(`${n.title} ${n.body}`)).toEqual([]);
    off();
    expect(team.listeners()).toBe(0);
  });

  it('says Redis could not be reached when the link never came up, and nothing for a normal start or stop', () => {
    const team = fakeTeam('connecting');
    const raised: RaiseInput[] = [];
    watchTeamLink(team, (n) => raised.push(n));
    team.set('connected');
    team.set('closed');
    expect(raised).toEqual([]);
    const late = fakeTeam('connecting');
    watchTeamLink(late, (n) => raised.push(n));
    late.set('degraded', 'Redis did not answer in time');
    expect(raised.map((n) => n.title)).toEqual(["Could not reach the team's Redis"]);
  });
});
