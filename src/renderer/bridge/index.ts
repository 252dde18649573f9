// Picks the Bridge for where the renderer runs: window.api in the desktop app, HTTP + SSE against
// the headless shell in a browser. The rest of the renderer only ever sees a Bridge.
import type { Bridge } from '../../shared/contract';
import { createHttpBridge } from './http';
import { createIpcBridge } from './ipc';

const TOKEN_KEY = 'switchyard.managementToken';

export type BridgeStatus = 'connecting' | 'open' | 'closed' | 'unauthorized';

/** Reads ?token= from the address (then removes it from the address bar) or the saved token. */
export function takeToken(loc: Location, storage: Storage, history: History): string | null {
  const url = new URL(loc.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    storage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete('token');
    history.replaceState(null, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  return storage.getItem(TOKEN_KEY);
}

export function saveToken(storage: Storage, token: string): void {
  storage.setItem(TOKEN_KEY, token);
}

export function forgetToken(storage: Storage): void {
  storage.removeItem(TOKEN_KEY);
}

export function connectBridge(token: string | null, onStatus: (s: BridgeStatus) => void): Bridge | null {
  if (window.api) {
    onStatus('open');
    return createIpcBridge(window.api);
  }
  if (!token) return null;
  return createHttpBridge({ baseUrl: window.location.origin, token, onStatus });
}
