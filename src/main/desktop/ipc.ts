// The desktop IPC server, built by walking the contract: one ipcMain.handle per method, each
// validated at the boundary by dispatch(), answering an {ok, value} | {ok:false, error} envelope
// (Electron does not carry Error fields across IPC). Electron objects are passed in, so this file
// imports no electron at run time and is tested with fakes.
import type { IpcMain, IpcMainInvokeEvent } from 'electron';
import {
  EVENT_NAMES,
  METHOD_NAMES,
  ipcChannel,
  ipcEventChannel,
  type EventName,
  type Handlers,
} from '../../shared/contract';
import type { EventBus } from '../engine/events';
import type { Logger } from '../engine/logger';
import { dispatch } from '../engine/management/dispatch';
import type { Envelope } from '../../shared/bridge';


export interface IpcServerOptions {
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>;
  handlers: Handlers;
  log: Logger;
  /** Only frames of our own renderer may call in. */
  isTrustedSender: (event: IpcMainInvokeEvent) => boolean;
}

export function registerIpcServer(o: IpcServerOptions): () => void {
  for (const name of METHOD_NAMES) {
    o.ipcMain.handle(ipcChannel(name), async (event, input: unknown): Promise<Envelope> => {
      if (!o.isTrustedSender(event)) {
        return { ok: false, error: { code: 'forbidden', message: 'untrusted sender' } };
      }
      const r = await dispatch(o.handlers, name, input, o.log);
      return r.ok ? { ok: true, value: r.value } : { ok: false, error: r.body.error };
    });
  }
  return () => METHOD_NAMES.forEach((name) => o.ipcMain.removeHandler(ipcChannel(name)));
}

/** Forwards every engine push event to the renderer. */
export function forwardEvents(bus: EventBus, send: (channel: string, payload: unknown) => void): () => void {
  return bus.onAny((name: EventName, payload) => send(ipcEventChannel(name), payload));
}

/** Channels the preload must listen on (for the drift test and the preload itself). */
export const EVENT_CHANNELS = EVENT_NAMES.map(ipcEventChannel);
