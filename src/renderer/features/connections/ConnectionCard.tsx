// One connection on the Connections page: its live state (healthy, cooling down with a countdown
// and the reason, terminal with the reason, disabled), what is in flight and queued, its provider's
// breaker when that is not closed, quick toggles, and test / edit / delete.
import { useId } from 'react';
import { BreakerBadge, HealthBadge, LiveStateBadge, reasonText } from '../../components/status';
import { Badge, Switch } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { hrefOf } from '../../hooks/useRoute';
import { breakerStateAt, healthNow, healthOf, liveStateOf } from '../../lib/connectionState';
import { conditionActive, HEALTH_GROUP } from '../../../shared/health';
import { hasClaudeOptions } from '../../lib/connectionForm';
import { formatAgo, formatMs, formatRemaining } from '../../lib/format';
import { TERMINAL_HELP } from '../../lib/reasons';
import { agentReach } from '../../lib/translation';
import type { AdmissionView, BreakerView, ConnectionView, CooldownEntry } from '../../../shared/model';
import { CLAUDE_KIND, KIND_INFO } from '../../../shared/model';
import { ClaudeAccountPanel } from './ClaudeAccountPanel';
import { ModelImport } from './ModelImport';
import { ProtectionControl } from './ProtectionControl';
import { managedOwner } from '../../stores/teamStore';
import { ManagedByTeam } from '../team/ManagedByTeam';

export function ConnectionCard({
  conn,
  entry,
  admission,
  breaker,
  now,
  onEdit,
  onDelete,
  onSignIn,
}: {
  conn: ConnectionView;
  entry: CooldownEntry | undefined;
  admission: AdmissionView | undefined;
  breaker: BreakerView | undefined;
  now: number;
  onEdit: () => void;
  onDelete: () => void;
  /** Claude subscription: "Sign in again". */
  onSignIn?: () => void;
}) {
  const d = useDashboard();
  const titleId = useId();
  // Team mode: a connection the team's publisher owns is read-only here.
  const owner = useSel(d.team, (s) => managedOwner(s.view, 'connections', conn.id));
  const pending = useSel(d.connections, (s) => !!s.pending[conn.id]) || owner !== null;
  const test = useSel(d.connections, (s) => s.tests[conn.id]);
  const clearing = useSel(d.resilience, (s) => s.busy);
  const state = liveStateOf(conn, entry, now);
  // The health model decides the badge and the reason line (the same state every page shows).
  const item = healthOf(healthNow(useSel(d.resilience, (s) => s.health), now), conn.id);
  const group = item ? HEALTH_GROUP[item.state] : state.kind === 'cooling' ? 'out' : state.kind === 'terminal' ? 'needsAttention' : 'healthy';
  const ownWords = item === undefined || item.state === 'cooling' || item.state === 'ejected' || item.state === 'terminal';
  const reason = ownWords && (state.kind === 'cooling' || state.kind === 'terminal') ? reasonText(state) : (item?.reason ?? null);
  const showReason = item ? group === 'out' || group === 'needsAttention' || item.state === 'degraded' || item.state === 'probing' : state.kind === 'cooling' || state.kind === 'terminal';
  const canClear = item
    ? item.conditions.some((c) => c.model === null && c.holds && c.clearedBy === 'clear' && conditionActive(c, now))
    : state.kind === 'cooling';
  const heldModels = item?.models ?? [];
  const breakerState = breaker ? breakerStateAt(breaker, now) : 'CLOSED';
  const store = d.connections.getState();
  const psd = conn.providerSpecificData ?? {};
  const claude = conn.kind === CLAUDE_KIND;
  const account = useSel(d.claude, (s) => s.byConnection[conn.id]);
  const signInAgain = claude && ((state.kind === 'terminal' && state.status === 'expired') || account?.token?.status === 'expired');
  const modelCaps = Object.entries(conn.rateLimitOverrides?.modelConcurrency ?? {});
  const strictCap = conn.rateLimitOverrides?.maxConcurrent;
  const caps = [conn.maxConcurrent ? `max ${conn.maxConcurrent}` : null, strictCap ? `strict cap ${strictCap}` : null].filter(Boolean);

  return (
    <article className={`conn-card state-${state.kind}`} aria-labelledby={titleId} data-testid="connection-card">
      <div className="conn-head">
        <div className="conn-title">
          <h3 id={titleId}>{conn.name}</h3>
          <div className="conn-meta">
            <Badge tone="neutral">{KIND_INFO[conn.kind].label}</Badge>
            <span className="muted">
              provider <code className="mono">{conn.provider}</code> · priority {conn.priority}
            </span>
            {owner && <ManagedByTeam owner={owner} />}
          </div>
        </div>
        <div className="conn-state" data-testid="connection-state">
          {item ? <HealthBadge item={item} now={now} /> : <LiveStateBadge state={state} />}
          {breakerState !== 'CLOSED' && (
            <a href={hrefOf('breakers')} className="plain-link" title="The provider's circuit breaker">
              <BreakerBadge state={breakerState} />
            </a>
          )}
        </div>
      </div>

      {showReason && (
        <div className={`conn-reason ${group === 'needsAttention' ? 'terminal' : group === 'out' ? 'cooling' : 'limited'}`}>
          <div>
            {group === 'needsAttention' && state.kind === 'terminal' ? (
              claude && state.status === 'expired' ? (
                'The Claude sign-in is no longer valid. Sign in again to bring the account back.'
              ) : (
                TERMINAL_HELP[state.status]
              )
            ) : group === 'out' ? (
              (item?.liftsAt ?? (state.kind === 'cooling' ? state.until : null)) !== null ? (
                <>
                  Out of routing for{' '}
                  <strong className="tabular">{formatRemaining((item?.liftsAt ?? (state.kind === 'cooling' ? state.until : now)) - now)}</strong>
                  {state.kind === 'cooling' && state.backoffLevel > 0 && <span className="muted"> · backoff level {state.backoffLevel}</span>}
                </>
              ) : (
                'Out of routing until someone acts'
              )
            ) : (
              'Still serving'
            )}
          </div>
          {reason && (
            <div className="reason-text" data-testid="connection-reason">
              {reason}
            </div>
          )}
          {canClear && (
            <button
              type="button"
              className="btn btn-sm"
              disabled={clearing}
              onClick={() => void d.resilience.getState().clear({ connectionIds: [conn.id] })}
              aria-label={`Clear cooldown of ${conn.name}`}
            >
              Clear cooldown
            </button>
          )}
          {state.kind === 'terminal' && signInAgain && onSignIn && (
            <button type="button" className="btn btn-sm btn-primary" onClick={onSignIn} aria-label={`Sign in again to ${conn.name}`}>
              Sign in again
            </button>
          )}
        </div>
      )}

      <dl className="conn-facts">
        <div>
          <dt>Endpoint</dt>
          <dd>
            <code className="mono truncate" title={conn.baseUrl}>
              {conn.baseUrl}
            </code>
          </dd>
        </div>
        <div>
          <dt>{claude ? 'Token' : 'Key'}</dt>
          <dd>{conn.secret.set ? <code className="mono">{conn.secret.masked}</code> : <span className="muted">none</span>}</dd>
        </div>
        <div>
          <dt>Models</dt>
          <dd title={conn.models.join(', ')}>
            {conn.models.length ? `${conn.models.slice(0, 3).join(', ')}${conn.models.length > 3 ? ` +${conn.models.length - 3}` : ''}` : ''}
            {conn.passthroughModels && <span className="muted">{conn.models.length ? ' · ' : ''}any model</span>}
          </dd>
        </div>
        <div className="conn-agents">
          <dt>Agents</dt>
          <dd data-testid="connection-agents">
            {agentReach(conn).map((r, i) => (
              <span key={r.agent} title={`${r.agent} speaks ${r.protocol}`}>
                {i > 0 && ' · '}
                {r.agent} <span className={r.how === 'native' ? 'ok-text' : 'muted'}>{r.how}</span>
                {r.note && <span className="muted"> ({r.note})</span>}
              </span>
            ))}
          </dd>
        </div>
        <div>
          <dt>Traffic</dt>
          <dd data-testid="connection-traffic">
            <span className="tabular">{admission?.inFlight ?? 0}</span> in flight · <span className="tabular">{admission?.queued ?? 0}</span> queued
            {admission?.pausedUntil && admission.pausedUntil > now && (
              <span className="muted"> · queue paused {formatRemaining(admission.pausedUntil - now)}</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Concurrency</dt>
          <dd>
            {caps.join(' · ')}
            {caps.length === 0 && modelCaps.length === 0 && <span className="muted">no cap</span>}
            {modelCaps.length > 0 && (
              <span className="muted">
                {caps.length > 0 && ' · '}
                {modelCaps.map(([m, c]) => `${m} ≤ ${c}`).join(', ')}
              </span>
            )}
          </dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd>{conn.health.lastUsedAt ? formatAgo(conn.health.lastUsedAt, now) : <span className="muted">never</span>}</dd>
        </div>
      </dl>

      {claude && <ClaudeAccountPanel conn={conn} account={account} now={now} />}

      {admission && admission.models.some((m) => m.inFlight || m.queued) && (
        <div className="model-gates">
          {admission.models
            .filter((m) => m.inFlight || m.queued)
            .map((m) => (
              <span key={m.model} className="chip">
                {m.model}: {m.cap !== null ? `${m.inFlight}/${m.cap}` : m.inFlight} running{m.queued ? `, ${m.queued} waiting` : ''}
              </span>
            ))}
        </div>
      )}

      {heldModels.length > 0 && (
        <div className="conn-lockouts" data-testid="connection-models-held">
          <Badge tone="warn">
            {heldModels.length === 1 ? '1 model held back' : `${heldModels.length} models held back`}
          </Badge>{' '}
          <span className="muted">
            {heldModels
              .map((m) => `${m.model} (${m.state === 'locked' ? 'locked' : 'queue paused'}${m.liftsAt !== null ? `, back in ${formatRemaining(m.liftsAt - now)}` : ''})`)
              .join(', ')}
          </span>{' '}
          · <a href={hrefOf('cooldowns')}>Cooldown manager</a>
        </div>
      )}

      <div className="conn-toggles">
        <Switch compact label="Enabled" checked={conn.enabled} disabled={pending} onChange={(v) => void store.patch(conn.id, { enabled: v }, 'Enabled')} />
        <ProtectionControl
          compact
          mode={conn.rateLimitProtectionMode}
          view={admission}
          authClass={conn.authClass}
          disabled={pending}
          onChange={(mode) => void store.setRateLimitProtection(conn.id, mode)}
        />
        <Switch
          compact
          label="Never cool down"
          checked={conn.disableCooling}
          disabled={pending}
          onChange={(v) => void store.patch(conn.id, { disableCooling: v }, 'cooling')}
        />
        {hasClaudeOptions(conn.kind) && (
          <>
            <Switch
              compact
              label="Low-priority lane"
              checked={psd.lowPriorityMode === true}
              disabled={pending}
              onChange={(v) => void store.patch(conn.id, { providerSpecificData: { ...psd, lowPriorityMode: v } }, 'the low-priority lane')}
            />
            <Switch
              compact
              label="Auto limit reset"
              checked={psd.autoLimitReset === true}
              disabled={pending}
              onChange={(v) => void store.patch(conn.id, { providerSpecificData: { ...psd, autoLimitReset: v } }, 'the automatic limit reset')}
            />
          </>
        )}
      </div>

      <div className="conn-foot">
        <div className="test-result" aria-live="polite">
          {test?.running && <span className="muted">Testing…</span>}
          {!test?.running && test?.result && (
            <span className={test.result.ok ? 'ok-text' : 'danger-text'}>
              {test.result.ok ? '✓ ' : '✕ '}
              {test.result.message}
              {test.result.latencyMs !== null && <span className="muted"> · {formatMs(test.result.latencyMs)}</span>}
              {test.result.ok && test.result.models.length > 0 && (
                <span className="muted"> · {test.result.models.length} models available</span>
              )}
            </span>
          )}
        </div>
        <div className="row-actions">
          <button type="button" className="btn btn-sm" disabled={test?.running} onClick={() => void store.test(conn.id)} aria-label={`Test ${conn.name}`}>
            Test
          </button>
          {signInAgain && state.kind !== 'terminal' && onSignIn && (
            <button type="button" className="btn btn-sm btn-primary" onClick={onSignIn} aria-label={`Sign in again to ${conn.name}`}>
              Sign in again
            </button>
          )}
          {!owner && (
            <>
              <button type="button" className="btn btn-sm" onClick={onEdit} aria-label={`Edit ${conn.name}`}>
                Edit
              </button>
              <button type="button" className="btn btn-sm btn-ghost danger-text" onClick={onDelete} aria-label={`Delete ${conn.name}`}>
                Delete
              </button>
            </>
          )}
        </div>
      </div>
      {!owner && !test?.running && test?.result?.ok && test.result.models.length > 0 && (
        <div className="conn-import">
          <ModelImport conn={conn} found={test.result.models} disabled={pending} />
        </div>
      )}
    </article>
  );
}
