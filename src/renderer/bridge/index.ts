// Picks the Bridge for where the renderer runs: window.api in the desktop app, HTTP + SSE against
// the headless shell in a browser. The rest of the renderer only ever sees a Bridge.
//
// In a browser the management token lives in a session cookie the page cannot read (HttpOnly,
// SameSite=Strict): a `?token=` link is exchanged for it by the server before the page loads, and
// the token gate exchanges a pasted token through `POST /api/session`. Nothing is kept in storage.
import { SESSION_PATH, type Bridge } from '../../shared/contract';
import { createHttpBridge } from './http';
import { createIpcBridge } from './ipc';

export type BridgeStatus = 'connecting' | 'open' | 'closed' | 'unauthorized';

/** The key older builds kept the token under in localStorage; removed on start. */
const LEGACY_TOKEN_KEY = 'switchyard.managementToken';

export function forgetLegacyToken(storage: Storage): void {
  storage.removeItem(LEGACY_TOKEN_KEY);
}

/** Exchanges a pasted token for the session cookie: 'ok', 'rejected', or 'unreachable'. */
export async function openSession(token: string, f: typeof fetch = fetch.bind(globalThis)): Promise<'ok' | 'rejected' | 'unreachable'> {
  try {
    const res = await f(SESSION_PATH, { method: 'POST', headers: { authorization: `Bearer ${token}` }, credentials: 'same-origin' });
    return res.ok ? 'ok' : 'rejected';
  } catch {
    return 'unreachable';
  }
}

/** Clears the session cookie ("Forget token"). */
export async function closeSession(f: typeof fetch = fetch.bind(globalThis)): Promise<void> {
  await f(SESSION_PATH, { method: 'DELETE', credentials: 'same-origin' }).catch(() => undefined);
}

export function connectBridge(onStatus: (s: BridgeStatus) => void): Bridge {
  if (window.api) {
    onStatus('open');
    return createIpcBridge(window.api);
  }
  return createHttpBridge({ baseUrl: window.location.origin, token: null, onStatus });
}
