// Whether a connection's requests go through its rate-limit queue (SPEC R-RQ-23..27, issue 22).
// A connection's mode decides: `on` always protects, `off` never does (a per-connection opt-out the
// spec lacked: the dashboard's control must do what it shows), and `auto`, the default, follows the
// safety net, which covers every enabled API-key connection while it is on.
import type { AdmissionView, RateLimitProtectionMode } from '../../../shared/model';
import type { ConnectionRecord } from '../store/connectionsRepo';

export interface Protection {
  protected: boolean;
  source: AdmissionView['protectionSource'];
}

/** What the automatic rule decides for a connection, whatever its mode. */
export function autoProtects(conn: Pick<ConnectionRecord, 'authClass' | 'enabled'>, autoEnableApiKeyProviders: boolean): boolean {
  return autoEnableApiKeyProviders && conn.enabled && conn.authClass === 'apikey';
}

export function protectionOf(
  conn: Pick<ConnectionRecord, 'protectionMode' | 'authClass' | 'enabled'>,
  autoEnableApiKeyProviders: boolean,
): Protection {
  if (conn.protectionMode === 'on') return { protected: true, source: 'explicit' };
  if (conn.protectionMode === 'off') return { protected: false, source: 'off' };
  if (autoProtects(conn, autoEnableApiKeyProviders)) return { protected: true, source: 'auto' };
  return { protected: false, source: 'off' };
}

/** SPEC's boolean (R-RQ-25/28) as a mode: true is `on`; false removes the explicit protection (`auto`). */
export const modeOfFlag = (enabled: boolean): RateLimitProtectionMode => (enabled ? 'on' : 'auto');
