// Builds window.api by walking the contract: one function per method (invoke on its channel) plus
// on(event) for pushes. No generic channel passthrough: the renderer can reach exactly the
// contract's channels. ipcRenderer is passed in so this is testable without Electron.
import type { IpcRenderer, IpcRendererEvent } from 'electron';
import type { Envelope, PreloadApi } from '../shared/bridge';
import { EVENT_NAMES, METHOD_NAMES, ipcChannel, ipcEventChannel, type EventName } from '../shared/contract';

export function buildApi(ipc: Pick<IpcRenderer, 'invoke' | 'on' | 'removeListener'>): PreloadApi {
  const api: Record<string, unknown> = {};
  for (const name of METHOD_NAMES) {
    api[name] = (input?: unknown) => ipc.invoke(ipcChannel(name), input ?? {}) as Promise<Envelope>;
  }
  const known = new Set<string>(EVENT_NAMES);
  api.on = (event: EventName, listener: (payload: unknown) => void) => {
    if (!known.has(event)) throw new Error(`unknown event ${String(event)}`);
    const wrapped = (_e: IpcRendererEvent, payload: unknown) => listener(payload);
    ipc.on(ipcEventChannel(event), wrapped);
    return () => ipc.removeListener(ipcEventChannel(event), wrapped);
  };
  return Object.freeze(api) as unknown as PreloadApi;
}
