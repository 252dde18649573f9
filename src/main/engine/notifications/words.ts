// Plain words of the notifications and the timeline spans. Pure functions; no I/O.
import { isTerminalStatus, type TerminalStatus } from '../../../shared/model';
import type { RaiseInput } from './notificationCenter';

const TERMINAL_WORDS: Record<TerminalStatus, { key: string; oauth: string }> = {
  expired: {
    key: 'The provider rejected its key several times in a row. Enter a working key to use it again.',
    oauth: 'Its sign-in expired or was revoked. Sign in again to use it.',
  },
  banned: {
    key: 'The provider says the account is suspended. It stays out of routing until its key is changed.',
    oauth: 'The provider says the account is suspended. It stays out of routing until you sign in with another account.',
  },
  credits_exhausted: {
    key: 'The account has no credits left. Add credits, then test the connection again.',
    oauth: 'The account has no credits left. Add credits, then test the connection again.',
  },
};

export const TERMINAL_SPAN_REASON: Record<TerminalStatus, string> = {
  expired: 'Key rejected or sign-in expired',
  banned: 'Account suspended',
  credits_exhausted: 'No credits left',
};

export function terminalNotice(c: { id: string; name: string; authClass: string }, status: TerminalStatus): RaiseInput {
  const w = TERMINAL_WORDS[status];
  return {
    kind: 'connection-terminal',
    subject: c.id,
    severity: 'error',
    title: `${c.name} stopped working`,
    body: c.authClass === 'oauth' ? w.oauth : w.key,
    link: '#/connections',
  };
}

export function breakerNotice(provider: string, halfOpenAt: number | null, now: number): RaiseInput {
  const secs = halfOpenAt !== null ? Math.max(1, Math.ceil((halfOpenAt - now) / 1000)) : null;
  return {
    kind: 'breaker-opened',
    subject: provider,
    severity: 'warning',
    title: `Requests to ${provider} are paused`,
    body: `Too many requests to ${provider} failed in a short time, so its connections are left out for now${secs !== null ? `; one request tries it again in about ${secs} s` : ''}.`,
    link: '#/breakers',
  };
}

export function exhaustedNotice(what: { combo: string | null; model: string }, requestId: string, cooling: boolean): RaiseInput {
  const subject = what.combo ? `combo:${what.combo}` : `model:${what.model}`;
  const name = what.combo ? `combo "${what.combo}"` : `"${what.model}"`;
  return {
    kind: 'targets-exhausted',
    subject,
    severity: cooling ? 'warning' : 'error',
    title: `Nothing could serve ${name}`,
    body: cooling
      ? `Every connection for ${name} was resting when a request asked for it, so the request was turned away. They come back by themselves.`
      : `No connection for ${name} can serve requests: fix or turn on one of them.`,
    link: `#/logs?id=${encodeURIComponent(requestId)}`,
  };
}

export function laneNotice(c: { id: string; name: string }, entered: boolean, until: number | null): RaiseInput {
  return {
    kind: 'claude-lane',
    subject: c.id,
    severity: 'info',
    title: entered ? `${c.name} moved to the slow lane` : `${c.name} left the slow lane`,
    body: entered
      ? `The account reached its usage limit, so Claude answers it more slowly for now${until !== null ? ' until its window resets' : ''}.`
      : 'The account answers at its normal speed again.',
    link: '#/cooldowns',
  };
}

export function limitResetNotice(c: { id: string; name: string }): RaiseInput {
  return {
    kind: 'claude-limit-reset',
    subject: c.id,
    severity: 'info',
    title: `${c.name} used its limit reset`,
    body: 'The account reached its usage limit and Switchyard used the reset Claude offered, so it serves again now. The next reset is offered later.',
    link: '#/cooldowns',
  };
}

export function proxyBindNotice(port: number, why: string): RaiseInput {
  return {
    kind: 'proxy-bind-failed',
    subject: 'proxy',
    severity: 'error',
    title: `The proxy could not open port ${port}`,
    body: `${why}. Agents cannot reach Switchyard on that port; pick another proxy port in Settings.`,
    link: '#/app',
  };
}

export const terminalOf = (s: string): TerminalStatus | null => (isTerminalStatus(s) ? s : null);
