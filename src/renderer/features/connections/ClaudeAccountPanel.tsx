// A Claude subscription's account state on its connection card: the 5-hour and 7-day usage bars
// with their reset countdowns, the sign-in (token expiry, refresh trouble), the low-priority lane
// (active until, slow status) and the limit reset (next available, last result). Everything comes
// from pushes; "Refresh usage" is the one on-demand read (GET /api/oauth/usage).
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { formatAgo, formatRemaining } from '../../lib/format';
import type { ClaudeAccountView, ClaudeUsageWindowView, ConnectionView } from '../../../shared/model';

const SLOW_STATUS: Record<string, string> = {
  active: 'serving slowly',
  not_needed: 'not needed right now',
  slot_busy: 'waiting for a slot',
  weekly_limit: 'weekly limit',
  budget_exhausted: 'lane budget used up',
  off: 'off',
  ineligible: 'not eligible',
};

const LANE_END: Record<string, string> = {
  window_over: 'the 5-hour window ended',
  window_changed: 'the 5-hour window changed',
  max_wait: 'waited too long',
  budget_exhausted: 'lane budget used up',
  weekly_limit: 'weekly limit reached',
  extra_usage: 'paid extra usage covers it',
  off: 'switched off by Claude',
  ineligible: 'not eligible',
};

const RESET_RESULT: Record<string, string> = {
  reset: 'reset done',
  not_limited: 'was not limited',
  already_used: 'already used this week',
  not_offered: 'not offered',
  error: 'failed',
};

/** A window as it reads now: past its reset it is fresh (nothing used), like the engine reads it. */
function windowAt(w: ClaudeUsageWindowView | null, now: number): ClaudeUsageWindowView | null {
  if (w && w.resetsAt !== null && w.resetsAt <= now) return { ...w, utilization: 0, resetsAt: null, status: null };
  return w;
}

export function UsageBar({ label, w, now }: { label: string; w: ClaudeUsageWindowView | null; now: number }) {
  const cur = windowAt(w, now);
  const pct = cur ? Math.round(cur.utilization * 100) : null;
  const tone = pct === null ? '' : pct >= 100 ? ' danger' : pct >= 80 ? ' warn' : '';
  return (
    <div className="usage-row">
      <span className="usage-label">{label}</span>
      <div
        className={`usage-bar${tone}`}
        role="meter"
        aria-label={`${label} usage`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct ?? 0}
        aria-valuetext={pct === null ? 'not seen yet' : `${pct}% used`}
      >
        <span style={{ width: `${Math.min(100, pct ?? 0)}%` }} />
      </div>
      <span className="usage-text tabular">
        {pct === null ? <span className="muted">not seen yet</span> : `${pct}%`}
        {cur?.resetsAt ? <span className="muted"> · resets in {formatRemaining(cur.resetsAt - now)}</span> : null}
      </span>
    </div>
  );
}

export function ClaudeAccountPanel({ conn, account, now }: { conn: ConnectionView; account: ClaudeAccountView | undefined; now: number }) {
  const d = useDashboard();
  const refreshing = useSel(d.claude, (s) => !!s.refreshing[conn.id]);
  const psd = conn.providerSpecificData ?? {};
  const t = account?.token ?? null;
  const lane = account?.lane;
  const reset = account?.reset ?? null;
  const u = account?.usage ?? null;

  const token = !t ? (
    <span className="muted">no credentials</span>
  ) : t.status === 'expired' ? (
    <span className="danger-text">expired: sign in again</span>
  ) : t.status === 'refresh_failing' ? (
    <span className="warn-text">refresh failing{t.retryAt ? `, retry in ${formatRemaining(t.retryAt - now)}` : ''}</span>
  ) : t.expiresAt === null ? (
    <span className="muted">no expiry known{t.canRefresh ? '' : ' · cannot refresh'}</span>
  ) : t.expiresAt <= now ? (
    <span>expired, renewed on the next request</span>
  ) : (
    <span>
      expires in <span className="tabular">{formatRemaining(t.expiresAt - now)}</span>
      {!t.canRefresh && <span className="muted"> · cannot refresh</span>}
    </span>
  );

  const laneUntil = lane && lane.until !== null && lane.until > now ? lane.until : null;
  const laneText =
    lane?.state === 'active' && laneUntil ? (
      <span>
        active for <span className="tabular">{formatRemaining(laneUntil - now)}</span>
        {lane.slowStatus && <span className="muted"> · {SLOW_STATUS[lane.slowStatus] ?? lane.slowStatus}</span>}
      </span>
    ) : lane?.state === 'blocked' && laneUntil ? (
      <span>
        not accepted for <span className="tabular">{formatRemaining(laneUntil - now)}</span>
        <span className="muted"> · {lane.blockedBy === 'budget_exhausted' ? 'lane budget used up' : 'waited too long'}</span>
      </span>
    ) : (
      <span className="muted">
        {psd.lowPriorityMode === true ? 'ready, used at the 5-hour limit' : 'off'}
        {lane?.lastEnd && ` · last ended: ${LANE_END[lane.lastEnd.reason] ?? lane.lastEnd.reason}`}
      </span>
    );

  const notBefore = reset ? Math.max(reset.nextAvailableAt ?? 0, reset.backoffUntil ?? 0) : 0;
  const resetText = (
    <span className={psd.autoLimitReset === true ? undefined : 'muted'}>
      {psd.autoLimitReset !== true ? 'off' : notBefore > now ? <>next try in <span className="tabular">{formatRemaining(notBefore - now)}</span></> : 'available at the limit'}
      {reset?.lastResult && (
        <span className="muted">
          {' '}
          · last: {RESET_RESULT[reset.lastResult] ?? reset.lastResult}
          {reset.lastAttemptAt !== null && ` ${formatAgo(reset.lastAttemptAt, now)}`}
        </span>
      )}
    </span>
  );

  return (
    <section className="claude-account" aria-label={`Claude account of ${conn.name}`} data-testid="claude-account">
      <div className="usage-bars">
        <UsageBar label="5-hour" w={u?.fiveHour ?? null} now={now} />
        <UsageBar label="7-day" w={u?.sevenDay ?? null} now={now} />
      </div>
      <dl className="conn-facts claude-facts">
        <div>
          <dt>Sign-in</dt>
          <dd data-testid="claude-token">
            {token}
            {account?.subscriptionType && <span className="muted"> · {account.subscriptionType}</span>}
          </dd>
        </div>
        <div>
          <dt>Low-priority lane</dt>
          <dd data-testid="claude-lane">{laneText}</dd>
        </div>
        <div>
          <dt>Limit reset</dt>
          <dd data-testid="claude-reset">{resetText}</dd>
        </div>
      </dl>
      <div className="claude-foot">
        <span className="muted">{u ? `Usage seen ${formatAgo(u.updatedAt, now)}` : 'Usage appears with the first answer, or read it now.'}</span>
        <button
          type="button"
          className="btn btn-sm"
          disabled={refreshing || t?.status === 'expired'}
          onClick={() => void d.claude.getState().refreshUsage(conn.id)}
          aria-label={`Refresh usage of ${conn.name}`}
        >
          {refreshing ? 'Reading…' : 'Refresh usage'}
        </button>
      </div>
    </section>
  );
}
