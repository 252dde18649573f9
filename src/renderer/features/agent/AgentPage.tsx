// "Connect your agent": the proxy address, a client key, copy-paste setup for the coding agents
// and the SDKs (with Apply / Restore for the CLI agents' own files), and client key management.
import { useState } from 'react';
import { CodeBlock, CopyButton } from '../../components/CopyButton';
import { LoadState } from '../../components/LoadState';
import { Tabs } from '../../components/Tabs';
import { Badge, Card, EmptyState, Field, PageHeader } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { hrefOf } from '../../hooks/useRoute';
import { agentGuides, type AgentGuide } from '../../lib/agentSetup';
import { activeKeys } from '../../stores/keysStore';
import { AgentConfigApply, canApply } from './AgentConfigApply';
import { ClientKeys } from './ClientKeys';
import { RouteAgentModels } from './RouteAgentModels';

const PLACEHOLDER_MODEL = '<model>';

export function AgentPage() {
  const d = useDashboard();
  const health = useSel(d.app, (s) => s.health);
  const info = useSel(d.app, (s) => s.info);
  const keys = useSel(d.keys, (s) => s.list);
  const keysLoaded = useSel(d.keys, (s) => s.loaded);
  const revealed = useSel(d.keys, (s) => s.revealed);
  const connections = useSel(d.connections, (s) => s.list);
  const connectionsLoaded = useSel(d.connections, (s) => s.loaded);
  const [chosenKey, setChosenKey] = useState<string | null>(null);
  const [guide, setGuide] = useState<AgentGuide['id']>('claude-code');
  const combos = useSel(d.combos, (s) => s.list);
  /** '' = the first model a connection lists; else a combo's name. */
  const [modelChoice, setModelChoice] = useState('');
  const combo = combos.find((c) => c.name === modelChoice) ?? null;

  const proxyUrl = health?.proxy.url ?? info?.proxyUrl ?? null;
  const usable = activeKeys(keys);
  const key = usable.find((k) => k.id === chosenKey) ?? usable[0] ?? null;
  const shownKey = key ? (revealed[key.id] ?? key.masked) : '<client key>';
  const enabled = connections.filter((c) => c.enabled);
  const firstModel = (protocol: 'openai' | 'anthropic' | 'gemini') =>
    enabled.find((c) => c.protocol === protocol && c.models.length)?.models[0] ?? PLACEHOLDER_MODEL;
  const input = (k: string) => ({
    proxyUrl: proxyUrl ?? 'http://127.0.0.1:8480',
    key: k,
    openaiModel: combo?.name ?? firstModel('openai'),
    anthropicModel: combo?.name ?? firstModel('anthropic'),
    // Gemini CLI reaches any connection through translation: a Gemini connection's model first.
    geminiModel: combo?.name ?? (firstModel('gemini') === PLACEHOLDER_MODEL ? firstModel('openai') : firstModel('gemini')),
    ...(combo ? { claudeModel: combo.name } : {}),
  });
  const guides = agentGuides(input(shownKey));
  /** The model Apply writes for an OpenAI-protocol agent (none while only the placeholder is known). */
  const applyModel = combo?.name ?? (firstModel('openai') === PLACEHOLDER_MODEL ? null : firstModel('openai'));
  const current = guides.find((g) => g.id === guide) ?? guides[0]!;
  const realSnippet = async (title: string) => {
    if (!key) return null;
    const secret = await d.keys.getState().reveal(key.id);
    if (!secret) return null;
    const g = agentGuides(input(secret)).find((x) => x.id === current.id);
    return g?.snippets.find((s) => s.title === title)?.code ?? null;
  };
  const usesPlaceholder = guides.some((g) => g.snippets.some((s) => s.code.includes(PLACEHOLDER_MODEL)));

  return (
    <div className="page">
      <PageHeader
        title="Connect your agent"
        description="Point any coding agent at the local proxy. Switchyard picks a healthy connection for every request and fails over when one is rate-limited or down."
      />

      {connectionsLoaded && connections.length === 0 && (
        <div className="callout callout-info">
          No provider connections yet. <a href={hrefOf('connections')}>Add a connection</a> so the proxy has somewhere to send requests.
        </div>
      )}

      <div className="grid-2">
        <Card title="Proxy address" description="Agents send their requests here. It only answers on this machine.">
          {!proxyUrl && !health && <LoadState topics="app" what="the proxy address" />}
          <dl className="kv">
            <dt>Proxy URL</dt>
            <dd>
              <code className="mono">{proxyUrl ?? (health?.proxy.error ? 'not listening' : '…')}</code>
              {proxyUrl && <CopyButton text={proxyUrl} ariaLabel="Copy proxy URL" />}
            </dd>
            <dt>OpenAI base URL</dt>
            <dd>
              <code className="mono">{proxyUrl ? `${proxyUrl}/v1` : '…'}</code>
              {proxyUrl && <CopyButton text={`${proxyUrl}/v1`} ariaLabel="Copy OpenAI base URL" />}
            </dd>
          </dl>
          {health?.proxy.error && <div className="callout callout-danger">{health.proxy.error}</div>}
        </Card>

        <Card title="Client key" description="Agents authenticate to the proxy with a client key (not your provider keys).">
          {!keysLoaded ? (
            <LoadState topics="keys" what="client keys" />
          ) : usable.length === 0 ? (
            <EmptyState title="No active client key">Create one below; agents cannot use the proxy without a key.</EmptyState>
          ) : (
            <>
              <Field label="Key for the snippets">
                {(p) => (
                  <select {...p} value={key?.id ?? ''} onChange={(e) => setChosenKey(e.target.value)}>
                    {usable.map((k) => (
                      <option key={k.id} value={k.id}>
                        {k.name} ({k.masked})
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              {key && (
                <div className="key-line">
                  <code className="mono" data-testid="agent-key">
                    {revealed[key.id] ?? key.masked}
                  </code>
                  {revealed[key.id] ? (
                    <button type="button" className="btn btn-sm" onClick={() => d.keys.getState().hide(key.id)}>
                      Hide
                    </button>
                  ) : (
                    <button type="button" className="btn btn-sm" onClick={() => void d.keys.getState().reveal(key.id)}>
                      Show
                    </button>
                  )}
                  <CopyButton getText={() => d.keys.getState().reveal(key.id)} ariaLabel="Copy client key" />
                </div>
              )}
            </>
          )}
        </Card>
      </div>

      <RouteAgentModels />

      <Card
        title="Setup"
        description={
          <>
            Copy buttons always copy the full key{key && !revealed[key.id] ? ' (shown masked here)' : ''}.
            {usesPlaceholder && (
              <>
                {' '}
                Replace <code className="mono">{PLACEHOLDER_MODEL}</code> with a model your connections serve.
              </>
            )}
          </>
        }
      >
        <Field
          label="Model for the snippets"
          hint={
            combos.length ? (
              'A combo fails over across models and providers. An agent asks for it by name, like a model.'
            ) : (
              <>
                Create a <a href={hrefOf('combos')}>combo</a> to give your agent one model name that fails over across models and providers.
              </>
            )
          }
        >
          {(p) => (
            <select {...p} value={modelChoice} onChange={(e) => setModelChoice(e.target.value)}>
              <option value="">A model your connections list</option>
              {combos.map((c) => (
                <option key={c.id} value={c.name}>
                  Combo {c.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Tabs label="Agent" tabs={guides.map((g) => ({ id: g.id, label: g.label }))} value={current.id} onChange={setGuide}>
          <p className="muted">{current.intro}</p>
          <div className="snippets">
            {current.snippets.map((s) => (
              <CodeBlock key={s.title} title={s.title} where={s.where} code={s.code} copyText={key ? () => realSnippet(s.title) : undefined} />
            ))}
          </div>
          {canApply(current.id) && (
            <AgentConfigApply key={current.id} agent={current.id} keyId={key?.id ?? null} model={current.id === 'claude-code' ? (combo?.name ?? null) : applyModel} />
          )}
          {current.id === 'claude-code' && (
            <p className="hint">
              Claude Code goes to connections that speak the Anthropic protocol <Badge tone="neutral">anthropic</Badge>{' '}
              <Badge tone="neutral">anthropic-compatible</Badge>.
              {combo
                ? ` ANTHROPIC_MODEL makes it ask for the combo ${combo.name}.`
                : ' To route the model ids Claude Code picks itself, map claude-* to a combo on the Combos page.'}
            </p>
          )}
        </Tabs>
      </Card>

      <ClientKeys />
    </div>
  );
}
