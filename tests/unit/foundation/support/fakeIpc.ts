// In-memory stand-ins for Electron's ipcMain, ipcRenderer and webContents.send, wired to each
// other the way Electron wires them, so the IPC server and the preload are tested without Electron.
import type { IpcMainInvokeEvent, IpcRenderer, IpcRendererEvent } from 'electron';

type MainHandler = (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown;
type RendererListener = (event: IpcRendererEvent, ...args: unknown[]) => void;

/** A sender as the IPC server sees it: the frame URL is what isTrustedSender usually checks. */
export const senderEvent = (url = 'app://switchyard/index.html') =>
  ({ senderFrame: { url }, sender: { id: 1 } }) as unknown as IpcMainInvokeEvent;

export function fakeIpcPair(sender: IpcMainInvokeEvent = senderEvent()) {
  const handlers = new Map<string, MainHandler>();
  const registrations: string[] = [];
  const ipcMain = {
    handlers,
    registrations,
    handle(channel: string, fn: MainHandler) {
      if (handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
      handlers.set(channel, fn);
      registrations.push(channel);
    },
    removeHandler(channel: string) {
      handlers.delete(channel);
    },
    /** What ipcRenderer.invoke does in Electron: run the one handler, reject when none. */
    async invoke(channel: string, input: unknown, event: IpcMainInvokeEvent = sender): Promise<unknown> {
      const fn = handlers.get(channel);
      if (!fn) throw new Error(`No handler registered for '${channel}'`);
      return fn(event, input);
    },
  };

  const listeners = new Map<string, Set<RendererListener>>();
  const invoked: { channel: string; input: unknown }[] = [];
  const ipcRenderer = {
    invoked,
    invoke(channel: string, input: unknown): Promise<any> {
      invoked.push({ channel, input });
      // Electron clones arguments across the process boundary.
      return ipcMain.invoke(channel, structuredClone(input));
    },
    on(channel: string, fn: RendererListener) {
      let set = listeners.get(channel);
      if (!set) listeners.set(channel, (set = new Set()));
      set.add(fn);
      return ipcRenderer;
    },
    removeListener(channel: string, fn: RendererListener) {
      listeners.get(channel)?.delete(fn);
      return ipcRenderer;
    },
    listenerCount(channel: string): number {
      return listeners.get(channel)?.size ?? 0;
    },
  };

  const webContents = {
    send(channel: string, payload: unknown) {
      for (const fn of [...(listeners.get(channel) ?? [])]) fn({} as IpcRendererEvent, structuredClone(payload));
    },
  };

  return {
    ipcMain,
    ipcRenderer: ipcRenderer as unknown as typeof ipcRenderer & Pick<IpcRenderer, 'invoke' | 'on' | 'removeListener'>,
    webContents,
  };
}
