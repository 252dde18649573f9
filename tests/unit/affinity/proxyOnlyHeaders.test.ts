// R-SA-06 / R-LS-10: upstream headers are built from scratch, so no session or lease header the
// client sends is forwarded, for either protocol, API key or OAuth.
import { describe, expect, it } from 'vitest';
import { buildUpstreamHeaders } from '../../../src/main/engine/upstream/headers';
import { connectionRecord } from '../../support/builders';

const PROXY_ONLY = {
  'x-session-id': 's',
  'x-codex-session-id': 's',
  'x-switchyard-session': 's',
  'x-omniroute-session': 's',
  'x-claude-code-session-id': 's',
  session_id: 's',
  'session-id': 's',
  'thread-id': 's',
  'x-opencode-session': 's',
  'x-switchyard-lease-owner': `vlo_${'a'.repeat(43)}`,
  'x-switchyard-lease-generation': '3',
  'x-omniroute-lease-owner': `vlo_${'a'.repeat(43)}`,
  'x-omniroute-lease-generation': '3',
};

describe('upstream headers', () => {
  it('never carry a session or lease header', () => {
    const conns = [
      connectionRecord({ kind: 'anthropic', protocol: 'anthropic' }),
      connectionRecord({ kind: 'anthropic', protocol: 'anthropic', authClass: 'oauth' }),
      connectionRecord({ kind: 'anthropic-compatible', protocol: 'anthropic' }),
      connectionRecord({ kind: 'openai', protocol: 'openai' }),
    ];
    for (const c of conns) {
      const h = buildUpstreamHeaders(c, 'secret-value', { ...PROXY_ONLY, 'anthropic-version': '2023-06-01', 'user-agent': 'claude-cli/2.0' }, { stream: true, hasBody: true });
      for (const name of Object.keys(PROXY_ONLY)) expect(h[name], `${c.kind} ${name}`).toBeUndefined();
      expect(JSON.stringify(h)).not.toContain('vlo_');
      expect(h['user-agent']).toBe('claude-cli/2.0');
    }
  });
});
