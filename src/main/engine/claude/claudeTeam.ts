// Team mode for Claude subscription accounts (issue 26). An account is its organisation on every
// instance (team/identity.ts), so what one instance learns about it holds for all: the
// low-priority lane (every instance sends the slow header while it is on, and none cools the
// account on the limit 429 the lane answers, R-CLA-06/07), and the weekly limit reset, which is a
// consumable: one attempt across the team (limitReset.ts), its memo shared. A lane forgotten
// because of this instance's own configuration stays this instance's business.
import type { Clock } from '../clock';
import type { Team } from '../team';
import type { TeamIdentity } from '../team/identity';
import type { LaneController, LaneEnd } from './laneController';
import type { LimitResetService, ResetMemo } from './limitReset';
import { IDLE, type LaneState } from './lowPriorityLane';

const DAY = 24 * 60 * 60_000;

export const CLAUDE_TABLES = { lane: 'claude.lane', reset: 'claude.reset' } as const;

interface LaneShare {
  s: LaneState;
  end: LaneEnd | null;
}

export interface ClaudeTeamDeps {
  team: Team;
  teamIds: Pick<TeamIdentity, 'ofId' | 'localIds'>;
  clock: Clock;
  lane: LaneController;
  reset: LimitResetService;
}

/** Shares the accounts' lanes and limit resets with the team (nothing when team mode is off). */
export function shareClaudeAccounts(d: ClaudeTeamDeps): void {
  if (!d.team.enabled) return;
  const { team, teamIds, clock } = d;
  const lanes = team.table<LaneShare>(CLAUDE_TABLES.lane, (teamId, v) => {
    for (const id of teamIds.localIds(teamId)) d.lane.applyRemote(id, v?.s ?? IDLE, v?.end ?? null);
  });
  d.lane.observer = (id, s, end) => {
    const teamId = teamIds.ofId(id);
    if (teamId === null) return;
    const ttl = s.kind === 'idle' ? DAY : Math.max(0, s.until - clock.now()) + DAY;
    lanes.publish(teamId, { s, end }, ttl);
  };
  const memos = team.table<ResetMemo>(CLAUDE_TABLES.reset, (teamId, m) => {
    if (m === null) return;
    for (const id of teamIds.localIds(teamId)) d.reset.applyRemote(id, m);
  });
  let n = 0;
  d.reset.share({
    teamIdOf: (id) => teamIds.ofId(id),
    owner: () => `${team.instanceId}#reset${++n}`,
    claim: (name, owner, ttl) => team.claim(name, owner, ttl),
    release: (name, owner) => team.release(name, owner),
    publish: (teamId, m) => memos.publish(teamId, m, Math.max(0, Math.max(m.nextAvailableAt ?? 0, m.backoffUntil ?? 0) - clock.now()) + DAY),
  });
}
