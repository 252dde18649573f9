// Whether a connection's requests go through its rate-limit queue (SPEC R-RQ-23..27). Explicit
// protection (rateLimitProtection === true) always counts; the auto-enable safety net covers every
// enabled API-key connection. `false` is the same as unset: there is no per-connection opt-out.
import type { AdmissionView } from '../../../shared/model';
import type { ConnectionRecord } from '../store/connectionsRepo';

export interface Protection {
  protected: boolean;
  source: AdmissionView['protectionSource'];
}

export function protectionOf(
  conn: Pick<ConnectionRecord, 'rateLimitProtection' | 'authClass' | 'enabled'>,
  autoEnableApiKeyProviders: boolean,
): Protection {
  if (conn.rateLimitProtection === true) return { protected: true, source: 'explicit' };
  if (autoEnableApiKeyProviders && conn.enabled && conn.authClass === 'apikey') return { protected: true, source: 'auto' };
  return { protected: false, source: 'off' };
}
