// Team (issue 26): several Switchyards sharing one pool of provider keys through Redis. The page
// shows the link's state (since when, why, what waits), where this instance stands in the team, the
// settings that join it (the Redis address, the team's name, this instance's name), the team key
// (generate, copy, paste; only ever shown masked), this instance's role in sharing the
// configuration (not shared, publish, follow) with "Publish now", and what the team manages here.
// Every value says where it comes from; a value set on the command line or in the environment
// cannot be changed here.
import { useState, type ReactNode } from 'react';
import { CopyButton } from '../../components/CopyButton';
import { LoadState } from '../../components/LoadState';
import { ConfirmDialog } from '../../components/Modal';
import { Badge, Card, Field, PageHeader, type Tone } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { formatAgo, formatCount } from '../../lib/format';
import type { TeamAction } from '../../stores/teamStore';
import { TEAM_ROLE_WORDS, TEAM_ROLES, TEAM_STATE_WORDS, type TeamLinkStateView, type TeamRole, type TeamValueView, type TeamView } from '../../../shared/team';
import './team.css';

const STATE_TONE: Record<TeamLinkStateView, Tone> = { off: 'neutral', connecting: 'info', connected: 'ok', degraded: 'warn', closed: 'neutral' };

/** A name the user types or reads in a terminal (a flag, an environment variable): shown as written. */
const Typed = ({ children }: { children: string }) => (
  <code className="mono" data-tech-name>
    {children}
  </code>
);

/** Where a value comes from, in words. */
function SourceNote({ v, savedNote }: { v: Pick<TeamValueView<unknown>, 'source' | 'setBy'>; savedNote?: string }) {
  switch (v.source) {
    case 'cli':
      return (
        <>
          Set with <Typed>{v.setBy ?? 'a command-line option'}</Typed> when Switchyard was started; start it without that option to change it here.
        </>
      );
    case 'env':
      return (
        <>
          Set by the environment variable <Typed>{v.setBy ?? ''}</Typed>; it cannot be changed here while that is set.
        </>
      );
    case 'saved':
      return <>{savedNote ?? 'Saved here.'}</>;
    default:
      return null;
  }
}

export function TeamPage() {
  const d = useDashboard();
  const view = useSel(d.team, (s) => s.view);
  const now = useServerNow(5_000);
  return (
    <div className="page team-page">
      <PageHeader
        title="Team"
        description="Several Switchyards can share one pool of provider keys through Redis: when one learns that a key is resting, out of service or at its limit, the others know it at once, and a lease or a limit holds for all of them. One of them can also publish its connections and settings for the others to follow."
      />
      {!view ? (
        <LoadState topics="team" what="the team settings" />
      ) : (
        <>
          <StatusCard view={view} now={now} />
          <div className="grid-2">
            <JoinCard view={view} />
            <KeyCard view={view} />
          </div>
          <SharingCard view={view} now={now} />
        </>
      )}
    </div>
  );
}

function StatusCard({ view, now }: { view: TeamView; now: number }) {
  const s = view.status;
  const role = TEAM_ROLE_WORDS[view.settings.role.value];
  return (
    <Card title="Status" description="How this instance stands with the team right now.">
      <dl className="kv" data-testid="team-status">
        <dt>Link</dt>
        <dd>
          <Badge tone={STATE_TONE[s.state]} dot>
            <span data-testid="team-state">{TEAM_STATE_WORDS[s.state]}</span>
          </Badge>
          {s.since !== null && s.state !== 'off' && <span className="muted">since {formatAgo(s.since, now)}</span>}
        </dd>
        {s.state === 'degraded' && (
          <>
            <dt>Why</dt>
            <dd data-testid="team-reason">{s.reason ?? 'Redis does not answer.'}</dd>
          </>
        )}
        <dt>Team</dt>
        <dd>{view.enabled ? <strong>{view.settings.team.value}</strong> : <span className="muted">none: team mode is off</span>}</dd>
        <dt>This instance</dt>
        <dd>
          <strong>{view.settings.displayName.value}</strong>
          <code className="mono muted" title="This instance's id in the team">
            {view.instanceId}
          </code>
        </dd>
        <dt>Configuration</dt>
        <dd>{role.label}</dd>
        <dt>Published by</dt>
        <dd data-testid="team-publisher">
          {view.config.publisher ? (
            <>
              {view.config.publisher.name}
              <span className="muted">
                {' '}
                · {formatAgo(view.config.publisher.publishedAt, now)} · publication {view.config.publisher.revision}
              </span>
            </>
          ) : (
            <span className="muted">nobody yet</span>
          )}
        </dd>
      </dl>
      {s.state === 'off' && (
        <p className="callout callout-info team-callout">
          Team mode is off: this Switchyard works alone. Enter the address of the team's Redis below, then restart Switchyard to join.
        </p>
      )}
      {s.state === 'degraded' && (
        <p className="callout callout-warn team-callout" role="status">
          Requests are still served, with what this workstation knows on its own.{' '}
          {s.pendingWrites > 0
            ? `${formatCount(s.pendingWrites, 'change waits', 'changes wait')} to be shared; they are sent as soon as Redis answers again.`
            : 'What changes here is shared as soon as Redis answers again.'}
        </p>
      )}
    </Card>
  );
}

/** A text setting of the team with its source; read-only when the command line or the environment sets it. */
function TextSetting({
  label,
  value,
  hint,
  placeholder,
  draft,
  onDraft,
}: {
  label: string;
  value: TeamValueView<string | null>;
  hint: ReactNode;
  placeholder?: string;
  draft: string | undefined;
  onDraft: (v: string) => void;
}) {
  const locked = value.source === 'cli' || value.source === 'env';
  return (
    <Field
      label={label}
      hint={
        <>
          {hint} <SourceNote v={value} />
        </>
      }
    >
      {(p) => (
        <input
          {...p}
          type="text"
          spellCheck={false}
          autoComplete="off"
          readOnly={locked}
          placeholder={placeholder}
          value={draft ?? (locked ? (value.value ?? '') : (value.saved ?? ''))}
          onChange={(e) => onDraft(e.target.value)}
        />
      )}
    </Field>
  );
}

function JoinCard({ view }: { view: TeamView }) {
  const d = useDashboard();
  const busy = useSel(d.team, (s) => s.busy);
  const error = useSel(d.team, (s) => s.errors.settings);
  const [draft, setDraft] = useState<{ redisUrl?: string; name?: string; displayName?: string }>({});
  const st = view.settings;
  const dirty = Object.keys(draft).length > 0;
  const edit = (k: keyof typeof draft) => (v: string) => {
    setDraft((x) => ({ ...x, [k]: v }));
    d.team.getState().clearError('settings');
  };
  const save = async () => {
    const patch: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(draft)) patch[k] = v.trim() === '' ? null : v.trim();
    if (await d.team.getState().save(patch)) setDraft({});
  };
  return (
    <Card title="Joining the team" description="Every Switchyard with the same Redis address and team name is in the same team.">
      <form
        className="card-stack team-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <TextSetting
          label="Redis address"
          value={st.address}
          placeholder="redis://host:6379"
          hint={
            <>
              Starts with <Typed>redis://</Typed> (or <Typed>rediss://</Typed> for an encrypted connection); a user name and password go in the address. It is stored encrypted and
              shown with its password hidden.
            </>
          }
          draft={draft.redisUrl}
          onDraft={edit('redisUrl')}
        />
        <TextSetting
          label="Team name"
          value={st.team.source === 'default' ? { ...st.team, saved: null } : st.team}
          placeholder={st.team.value}
          hint="Instances sharing one Redis but with another team name do not meet."
          draft={draft.name}
          onDraft={edit('name')}
        />
        <TextSetting
          label="This instance's name"
          value={st.displayName.source === 'default' ? { ...st.displayName, saved: null } : st.displayName}
          placeholder={st.displayName.value}
          hint="How the others see this instance, e.g. on the pages of what it publishes."
          draft={draft.displayName}
          onDraft={edit('displayName')}
        />
        {error && (
          <div className="field-error" role="alert">
            {error}
          </div>
        )}
        {st.restartNeeded && (
          <p className="callout callout-warn" role="status" data-testid="team-restart">
            {st.restartNeeded}
          </p>
        )}
        <div className="team-buttons">
          <button type="submit" className="btn btn-primary" disabled={!dirty || busy !== null}>
            Save
          </button>
          {dirty && (
            <button type="button" className="btn btn-ghost" onClick={() => setDraft({})}>
              Cancel
            </button>
          )}
        </div>
      </form>
    </Card>
  );
}

function KeyCard({ view }: { view: TeamView }) {
  const d = useDashboard();
  const busy = useSel(d.team, (s) => s.busy);
  const error = useSel(d.team, (s) => s.errors.key ?? s.errors.generate);
  const [pasted, setPasted] = useState('');
  const [confirming, setConfirming] = useState(false);
  const key = view.settings.key;
  const locked = key.source === 'env';
  const store = d.team.getState();
  const clear = (a: TeamAction) => store.clearError(a);
  return (
    <Card
      title="Team key"
      description="Encrypts the connection keys before they are published, and proves to the others that what they apply was published by someone holding it. It never goes through Redis: copy it here and paste it on every other instance of the team."
    >
      <div className="card-stack">
        <div className="key-line" data-testid="team-key">
          {key.set ? (
            <>
              <code className="mono">{key.masked}</code>
              <span className="muted">fingerprint {key.fingerprint}</span>
            </>
          ) : (
            <span className="muted">No key yet.</span>
          )}
        </div>
        {key.source === 'env' && (
          <p className="hint">
            <SourceNote v={key} />
          </p>
        )}
        <div className="team-buttons">
          {key.set && <CopyButton getText={() => store.revealKey()} label="Copy key" ariaLabel="Copy the team key" />}
          {!locked && (
            <button type="button" className="btn btn-sm" disabled={busy !== null} onClick={() => (key.set ? setConfirming(true) : void store.generateKey())}>
              {key.set ? 'Make a new key' : 'Make a key'}
            </button>
          )}
        </div>
        {!locked && (
          <form
            className="inline-form team-paste"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              if (!pasted.trim()) return;
              void store.save({ key: pasted.trim() }, 'key').then((ok) => ok && setPasted(''));
            }}
          >
            <Field label="Paste the team's key" hint="From the Team page of the instance that made it. The fingerprints match when the keys do.">
              {(p) => (
                <input
                  {...p}
                  type="password"
                  autoComplete="off"
                  spellCheck={false}
                  value={pasted}
                  onChange={(e) => {
                    setPasted(e.target.value);
                    clear('key');
                  }}
                />
              )}
            </Field>
            <button type="submit" className="btn" disabled={!pasted.trim() || busy !== null}>
              Use this key
            </button>
          </form>
        )}
        {error && (
          <div className="field-error" role="alert">
            {error}
          </div>
        )}
      </div>
      {confirming && (
        <ConfirmDialog
          title="Make a new team key?"
          confirmLabel="Make a new key"
          danger
          busy={busy === 'generate'}
          onCancel={() => setConfirming(false)}
          onConfirm={async () => {
            if (await store.generateKey()) setConfirming(false);
          }}
        >
          <p>
            The instances that follow this one keep what they have, but cannot apply what is published next until they get the new key. Copy it to them
            afterwards.
          </p>
        </ConfirmDialog>
      )}
    </Card>
  );
}

function SharingCard({ view, now }: { view: TeamView; now: number }) {
  const d = useDashboard();
  const busy = useSel(d.team, (s) => s.busy);
  const error = useSel(d.team, (s) => s.errors.publish ?? s.errors.role);
  const role = view.settings.role;
  const locked = role.source === 'env';
  const c = view.config;
  const m = view.managed;
  const store = d.team.getState();
  return (
    <Card
      title="Sharing the configuration"
      description="One instance owns the team's connections, combos, model mappings, error rules and settings, and publishes them; the others follow. Each workstation keeps its own client keys, request log, proxy port and muted notifications."
      actions={
        role.value === 'publish' && view.enabled ? (
          <button type="button" className="btn btn-primary" disabled={busy !== null} onClick={() => void store.publish()}>
            Publish now
          </button>
        ) : undefined
      }
    >
      <fieldset className="team-roles" disabled={locked || busy !== null}>
        <legend>This instance</legend>
        {TEAM_ROLES.map((r: TeamRole) => (
          <label key={r} className={`team-role${role.value === r ? ' active' : ''}`}>
            <input type="radio" name="team-role" value={r} checked={role.value === r} onChange={() => void store.save({ role: r }, 'role')} />
            <span>
              <strong>{TEAM_ROLE_WORDS[r].label}</strong>
              <span className="hint">{TEAM_ROLE_WORDS[r].help}</span>
            </span>
          </label>
        ))}
      </fieldset>
      {locked && (
        <p className="hint">
          <SourceNote v={role} />
        </p>
      )}
      <div className="team-sharing" data-testid="team-sharing">
        {!view.enabled && role.value !== 'off' && <p className="muted">Applies once this instance is in a team.</p>}
        {view.enabled && c.state === 'published' && c.publisher && (
          <p className="ok-text" role="status">
            Published {formatAgo(c.publisher.publishedAt, now)} (publication {c.publisher.revision}). Every change here is published again at once.
          </p>
        )}
        {view.enabled && c.state === 'following' && c.publisher && (
          <p className="ok-text" role="status">
            Following {c.publisher.name}: publication {c.publisher.revision}, applied {c.appliedAt !== null ? formatAgo(c.appliedAt, now) : ''}.{' '}
            {formatCount(m.connections.length, 'connection')}, {formatCount(m.combos.length, 'combo')}, {formatCount(m.mappings.length, 'model mapping')} and the
            team's settings are managed by the team here: change them on {c.publisher.name}'s Switchyard.
          </p>
        )}
        {view.enabled && c.state === 'waiting' && c.message && <p className="muted">{c.message}</p>}
        {c.state === 'failed' && c.message && (
          <p className="callout callout-danger" role="alert" data-testid="team-config-error">
            {c.message}
          </p>
        )}
        {c.state === 'published' && c.message && (
          <p className="callout callout-warn" role="status">
            {c.message}
          </p>
        )}
        {error && (
          <div className="field-error" role="alert">
            {error}
          </div>
        )}
      </div>
    </Card>
  );
}
