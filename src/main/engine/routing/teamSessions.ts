// Team mode for session pins and exclusive leases (issue 26), put together: the names both share
// (sessionTeam.ts), the team's lease ledger (leases/teamLeases.ts), the team's pins
// (affinity/teamPins.ts), and their reconcile on each (re)connect. Built only when team mode is on.
import type { ClientKeyService } from '../auth/clientKeys';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import type { LeasesRepo } from '../store/leasesRepo';
import type { Team } from '../team';
import type { TeamIdentity } from '../team/identity';
import type { SessionAffinity } from './affinity/sessionAffinity';
import { TeamPins } from './affinity/teamPins';
import type { LeaseBook } from './leases/leaseBook';
import { TeamLeases } from './leases/teamLeases';
import { SessionsTeam, SessionTeamIds, SessionTeamLink, type SessionTeamIdsDeps } from './sessionTeam';

export interface TeamSessionsOptions {
  team: Team;
  teamIds: TeamIdentity;
  clientKeys: Pick<ClientKeyService, 'get' | 'list'>;
  combos: SessionTeamIdsDeps['combos'];
  affinity: SessionAffinity;
  book: LeaseBook;
  leasesRepo: LeasesRepo;
  clock: Clock;
  log: Logger;
  /** sessionAffinityTtlMs. */
  ttlMs(): number;
}

export interface TeamSessions {
  /** The lease ledger the endpoint and the dispatch barrier ask. */
  leases: TeamLeases;
  pins: TeamPins;
  /** Resolves once a reconcile in progress has finished. */
  settled(): Promise<void>;
  /** The engine is stopping: resolves once nothing more will touch the store. */
  close(): Promise<void>;
}

const EPOCH = 'teamEpoch';

export function createTeamSessions(o: TeamSessionsOptions): TeamSessions {
  const link = new SessionTeamLink(o.team);
  const ids = new SessionTeamIds({
    teamName: o.team.name,
    instanceId: o.team.instanceId,
    teamIds: o.teamIds,
    clientKeys: { get: (id) => o.clientKeys.get(id), ids: () => o.clientKeys.list().map((k) => k.id) },
    combos: o.combos,
  });
  const leases = new TeamLeases({ book: o.book, link, ids, repo: o.leasesRepo, clock: o.clock });
  const pins = new TeamPins({ affinity: o.affinity, link, ids, clock: o.clock, ttlMs: o.ttlMs });
  const sync = new SessionsTeam({
    link,
    parts: [leases, pins],
    epoch: { get: () => o.leasesRepo.teamState<string>(EPOCH), set: (v) => o.leasesRepo.setTeamState(EPOCH, v) },
    log: o.log,
  });
  sync.start();
  return { leases, pins, settled: () => sync.settled(), close: () => sync.close() };
}
