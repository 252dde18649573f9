// "Apply" / "Restore" for a CLI agent on the Connect your agent page: Switchyard writes the proxy
// address, the chosen client key and model into the agent's own configuration file (merged into
// what is there, with a backup), and Restore puts back exactly what it replaced.
import { useEffect, useState } from 'react';
import { AGENT_CONFIG_AGENTS, type AgentConfigId, type AgentConfigStatus } from '../../../shared/agentConfig';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { describeError, messageForField } from '../../lib/errors';

export const canApply = (id: string): id is AgentConfigId => (AGENT_CONFIG_AGENTS as readonly string[]).includes(id);

export function AgentConfigApply({ agent, keyId, model }: { agent: AgentConfigId; keyId: string | null; model: string | null }) {
  const d = useDashboard();
  const [status, setStatus] = useState<AgentConfigStatus | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const connected = useSel(d.app, (s) => s.link === 'open');

  useEffect(() => {
    if (!connected) return;
    let live = true;
    // Async, so a bridge that is not there yet rejects instead of throwing out of the effect.
    const read = async () => (await d.bridge.listAgentConfigs()).find((s) => s.agent === agent) ?? null;
    read()
      .then((s) => live && setStatus(s))
      .catch((err: unknown) => live && setError(messageForField(describeError(err))));
    return () => {
      live = false;
    };
  }, [d, agent, connected]);

  const run = async (fn: () => Promise<AgentConfigStatus>) => {
    setBusy(true);
    setError(null);
    try {
      setStatus(await fn());
    } catch (err) {
      setError(messageForField(describeError(err)));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="agent-apply" data-testid="agent-apply">
      <p className="hint">
        {status?.applied ? (
          <>
            Switchyard&apos;s settings are in <code className="mono">{status.file}</code>
            {status.backup && (
              <>
                {' '}
                (the file as it was is kept in <code className="mono">{status.backup}</code>)
              </>
            )}
            . Restore puts back what they replaced; anything else in the file stays as it is.
          </>
        ) : (
          <>
            Apply writes the proxy address, the key and the model into{' '}
            <code className="mono">{status?.file ?? 'the agent\u2019s configuration file'}</code>, next to your own settings, and keeps a copy of the
            file first.
          </>
        )}
      </p>
      <div className="row">
        <button
          type="button"
          className="btn btn-primary"
          disabled={busy || !keyId}
          onClick={() => void run(() => d.bridge.applyAgentConfig({ agent, keyId: keyId!, model }))}
        >
          Apply
        </button>
        <button type="button" className="btn" disabled={busy || !status?.applied} onClick={() => void run(() => d.bridge.restoreAgentConfig({ agent }))}>
          Restore
        </button>
      </div>
      {error && <div className="callout callout-danger">{error}</div>}
    </div>
  );
}
