// App & token: version, shell, data folder, management address, and the management token (for
// scripts and for opening the dashboard in a browser). In a browser, the saved token can be
// forgotten here.
import { CopyButton } from '../../components/CopyButton';
import { LoadState } from '../../components/LoadState';
import { Badge, Card, PageHeader } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { formatRemaining } from '../../lib/format';

export function AppPage({ onForgetToken }: { onForgetToken?: () => void }) {
  const d = useDashboard();
  const info = useSel(d.app, (s) => s.info);
  const health = useSel(d.app, (s) => s.health);
  const token = useSel(d.app, (s) => s.managementToken);
  const now = useServerNow(10_000);
  const store = d.app.getState();
  const browserLink = info?.managementUrl && token ? `${info.managementUrl.replace(/\/+$/, '')}/?token=${encodeURIComponent(token)}` : null;

  return (
    <div className="page">
      <PageHeader title="App & token" description="Where Switchyard keeps its data, and the token that opens its management API." />
      <div className="grid-2">
        <Card title="About">
          {!info && <LoadState topics="app" what="the app's details" />}
          <dl className="kv">
            <dt>Version</dt>
            <dd>{info?.version ?? '…'}</dd>
            <dt>Running as</dt>
            <dd>{info ? <Badge tone="neutral">{info.shell === 'desktop' ? 'Desktop app' : 'Headless (npm run serve)'}</Badge> : '…'}</dd>
            <dt>Up for</dt>
            <dd>{info ? formatRemaining(Math.max(0, now - info.startedAt)) : '…'}</dd>
            <dt>Engine</dt>
            <dd>{health ? <Badge tone={health.status === 'ok' ? 'ok' : 'warn'} dot>{health.status}</Badge> : '…'}</dd>
            <dt>Proxy</dt>
            <dd>
              <code className="mono">{info?.proxyUrl ?? 'not listening'}</code>
            </dd>
            <dt>Management API</dt>
            <dd>
              <code className="mono">{info?.managementUrl ?? (info?.shell === 'desktop' ? 'in-app only' : '…')}</code>
            </dd>
            <dt>Data folder</dt>
            <dd>
              <code className="mono" data-testid="data-dir">
                {info?.dataDir ?? '…'}
              </code>
              {info && <CopyButton text={info.dataDir} ariaLabel="Copy data folder" />}
            </dd>
          </dl>
        </Card>

        <Card
          title="Management token"
          description="Every call to the management API needs it. Anyone with it can change connections and settings, so keep it private."
        >
          <div className="card-stack">
            <div className="key-line">
              <code className="mono" data-testid="management-token">
                {token ?? '•'.repeat(24)}
              </code>
              {token ? (
                <button type="button" className="btn btn-sm" onClick={() => store.hideToken()}>
                  Hide
                </button>
              ) : (
                <button type="button" className="btn btn-sm" onClick={() => void store.revealToken()}>
                  Show token
                </button>
              )}
              <CopyButton getText={() => store.revealToken()} ariaLabel="Copy management token" />
            </div>
            {browserLink && (
              <div className="stack">
                <div className="muted">Open the dashboard in a browser on this machine:</div>
                <div className="key-line">
                  <code className="mono truncate">{browserLink}</code>
                  <CopyButton text={browserLink} ariaLabel="Copy browser link" />
                </div>
              </div>
            )}
            <p className="hint">
              Scripts send it as <code className="mono">Authorization: Bearer &lt;token&gt;</code>. It is stored in the data folder as{' '}
              <code className="mono">management-token</code>.
            </p>
            {onForgetToken && (
              <button type="button" className="btn btn-sm" onClick={onForgetToken}>
                Forget the token in this browser
              </button>
            )}
          </div>
        </Card>
      </div>
    </div>
  );
}
