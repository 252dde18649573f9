// Team mode's notifications (issue 26): the link to Redis degrading and coming back, and a
// published configuration this instance could not apply. Raised on the transitions only (never per
// request), in plain words, each linking to the Team page.
import type { TeamStatus } from '../team';
import type { RaiseInput } from './notificationCenter';

export function teamLinkLostNotice(s: { reason: string | null; team: string | null }, atStart: boolean): RaiseInput {
  const why = s.reason ? ` (${s.reason})` : '';
  return {
    kind: 'team-link',
    subject: 'lost',
    severity: 'warning',
    title: atStart ? `Could not reach the team's Redis` : `Lost the link to the team`,
    body: `Switchyard keeps serving requests with this workstation's own state${why}. What changes here is shared once Redis answers again.`,
    link: '#/team',
  };
}

export function teamLinkBackNotice(s: { team: string | null }): RaiseInput {
  return {
    kind: 'team-link',
    subject: 'back',
    severity: 'info',
    title: `Back in touch with the team${s.team ? ` "${s.team}"` : ''}`,
    body: "Redis answers again: the changes made meanwhile were shared and the team's state was read back.",
    link: '#/team',
  };
}

export function teamConfigNotice(message: string): RaiseInput {
  return {
    kind: 'team-config',
    subject: 'apply',
    severity: 'error',
    title: "The team's configuration was not applied",
    body: message,
    link: '#/team',
  };
}

/**
 * Raises a notice when the link degrades (from connected, or at start) and when it recovers after
 * being degraded. Answers the unsubscribe.
 */
export function watchTeamLink(
  team: { status(): TeamStatus; onStatus(fn: (s: TeamStatus) => void): () => void },
  raise: (n: RaiseInput) => void,
): () => void {
  let was = team.status().state;
  return team.onStatus((s) => {
    const prev = was;
    was = s.state;
    if (s.state === prev) return;
    if (s.state === 'degraded') raise(teamLinkLostNotice({ reason: s.lastError, team: s.team }, prev === 'connecting'));
    else if (s.state === 'connected' && prev === 'degraded') raise(teamLinkBackNotice(s));
  });
}
