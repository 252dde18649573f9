// Team mode as the dashboard and the management API see it (issue 26): one view of the link's
// status, the team settings and configuration sharing, pushed as the `team` event when any of them
// changes; the management handlers behind the Team page; the notifications when the link degrades
// or recovers and when the team's configuration cannot be applied.
import type { Handlers } from '../../../shared/contract';
import type { TeamStatusView, TeamView } from '../../../shared/team';
import type { CancelTimer, Clock } from '../clock';
import { ApiError } from '../errors';
import { CoalescedTopic, type EventBus } from '../events';
import type { RaiseInput } from '../notifications/notificationCenter';
import { teamConfigNotice, watchTeamLink } from '../notifications/teamNotices';
import type { ConfigShare } from './configShare';
import type { Team } from './index';
import type { TeamSettings } from './teamSettings';

export type TeamHandlers = Pick<Handlers, 'getTeam' | 'updateTeamSettings' | 'generateTeamKey' | 'revealTeamKey' | 'publishTeamConfig'>;

/** How soon a change reaches the dashboard (a burst is one push). */
const PUSH_MS = 100;
/** While degraded, the writes waiting for Redis are pushed this often (they grow without a state change). */
const PENDING_PUSH_MS = 2_000;

export interface TeamModeDeps {
  team: Team;
  teamSettings: TeamSettings;
  config: ConfigShare;
  bus: EventBus;
  clock: Clock;
  raise: (n: RaiseInput) => void;
}

export function createTeamMode(d: TeamModeDeps) {
  const status = (): TeamStatusView => {
    const s = d.team.status();
    return { state: s.state, since: s.since, reason: s.lastError, pendingWrites: s.pending };
  };
  const view = (): TeamView => ({
    enabled: d.team.enabled,
    instanceId: d.team.instanceId,
    status: status(),
    settings: d.teamSettings.view(),
    config: d.config.view(),
    managed: d.config.managedView(),
  });
  const topic = new CoalescedTopic(d.bus, d.clock, 'team', view, PUSH_MS);

  let lastFailure: string | null = null;
  const configChanged = () => {
    topic.touch();
    const v = d.config.view();
    const failure = v.state === 'failed' ? v.message : null;
    if (failure && failure !== lastFailure) d.raise(teamConfigNotice(failure));
    lastFailure = failure;
  };

  let pendingTimer: CancelTimer | null = null;
  const watchPending = () => {
    if (d.team.status().state !== 'degraded') {
      pendingTimer?.();
      pendingTimer = null;
      return;
    }
    if (pendingTimer) return;
    pendingTimer = d.clock.setTimer(() => {
      pendingTimer = null;
      topic.touch();
      watchPending();
    }, PENDING_PUSH_MS);
  };

  const offs = [
    d.team.onStatus(() => {
      topic.touch();
      watchPending();
    }),
    d.config.onChange(configChanged),
    d.teamSettings.onChange(() => topic.touch()),
    watchTeamLink(d.team, d.raise),
  ];

  const handlers: TeamHandlers = {
    getTeam: async () => view(),
    updateTeamSettings: async ({ patch }) => {
      d.teamSettings.patch(patch);
      return view();
    },
    generateTeamKey: async () => {
      d.teamSettings.generateKey();
      return view();
    },
    revealTeamKey: async () => {
      const key = d.teamSettings.revealKey();
      if (!key) throw new ApiError(404, 'no_team_key', 'There is no team key yet: generate one, or paste the key from the workstation that made it.');
      return { key };
    },
    publishTeamConfig: async () => {
      d.config.publishNow();
      return view();
    },
  };

  return {
    view,
    handlers,
    /** The publisher's name when an item is managed by the team here (the management guard asks). */
    ownerOf: d.config.ownerOf.bind(d.config),
    close(): void {
      offs.splice(0).forEach((o) => o());
      pendingTimer?.();
      topic.dispose();
      d.config.close();
    },
  };
}

export type TeamMode = ReturnType<typeof createTeamMode>;
