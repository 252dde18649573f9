// Desktop composition root (Electron main). The only file family that imports electron: it starts
// the engine in-process, holds the single-instance lock, opens the window, owns the tray and maps
// the typed contract onto IPC. Everything it starts also runs headless (serve.ts).
import { app, BrowserWindow, clipboard, dialog, ipcMain, Menu, nativeImage, Notification, safeStorage, shell, Tray } from 'electron';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createEngine, type Engine } from './engine';
import { forwardEvents, registerIpcServer } from './desktop/ipc';
import { keychainKeyProvider } from './desktop/keychain';
import { wireNativeNotifications } from './desktop/nativeNotifications';
import { electronNativeBinding } from './desktop/nativeBinding';
import { createTray } from './desktop/tray';

const here = dirname(fileURLToPath(import.meta.url));
const appRoot = join(here, '..', '..');
const preloadPath = join(here, '..', 'preload', 'index.cjs');
const rendererFile = join(here, '..', 'renderer', 'index.html');
const resources = join(appRoot, 'resources');

let engine: Engine | null = null;
let win: BrowserWindow | null = null;
let quitting = false;

function showWindow() {
  if (!win || win.isDestroyed()) win = createWindow();
  if (win.isMinimized()) win.restore();
  win.show();
  win.focus();
}

function createWindow(): BrowserWindow {
  const w = new BrowserWindow({
    width: 1280,
    height: 840,
    minWidth: 900,
    minHeight: 600,
    show: false,
    title: 'Switchyard',
    icon: join(resources, 'icon.png'),
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    },
  });
  w.once('ready-to-show', () => w.show());
  // Links open in the browser, never inside the app window.
  w.webContents.setWindowOpenHandler(({ url }) => {
    if (/^https?:/.test(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  w.webContents.on('will-navigate', (e) => e.preventDefault());
  // Closing the window keeps the proxy running in the tray; Quit ends it.
  w.on('close', (e) => {
    if (!quitting) {
      e.preventDefault();
      w.hide();
    }
  });
  const devUrl = process.env.ELECTRON_RENDERER_URL;
  if (devUrl) void w.loadURL(devUrl);
  else void w.loadFile(rendererFile);
  return w;
}

const rendererFileUrl = pathToFileURL(rendererFile).href;

/** Only our own renderer may call the IPC API: the built file, or the dev server's exact origin. */
function isTrustedSender(url: string | undefined): boolean {
  if (!url) return false;
  try {
    const u = new URL(url);
    const devUrl = process.env.ELECTRON_RENDERER_URL;
    if (devUrl && u.origin === new URL(devUrl).origin) return true;
    return u.protocol === 'file:' && `${u.origin === 'null' ? 'file://' : u.origin}${u.pathname}` === rendererFileUrl;
  } catch {
    return false;
  }
}

async function boot() {
  const dataDir = app.getPath('userData');
  mkdirSync(dataDir, { recursive: true });
  try {
    engine = await createEngine({
      dataDir,
      shell: 'desktop',
      keyProvider: keychainKeyProvider(dataDir, safeStorage),
      nativeBinding: electronNativeBinding(appRoot, process.resourcesPath),
      // "Sign in with Claude" opens the system browser, never a window inside the app.
      openUrl: (url) => shell.openExternal(url),
    });
  } catch (err) {
    dialog.showErrorBox(
      'Switchyard could not start',
      `${(err as Error).message}\n\nIf this mentions NODE_MODULE_VERSION, run "npm start" from the project folder: it prepares the Electron build of better-sqlite3.`,
    );
    app.exit(1);
    return;
  }
  const e = engine;
  registerIpcServer({
    ipcMain,
    handlers: e.handlers,
    log: e.log.child('ipc'),
    isTrustedSender: (event) => isTrustedSender(event.senderFrame?.url),
  });
  forwardEvents(e.bus, (channel, payload) => {
    for (const w of BrowserWindow.getAllWindows()) if (!w.isDestroyed()) w.webContents.send(channel, payload);
  });
  // Before start: a proxy that cannot bind its port is one of them.
  wireNativeNotifications({
    Notification,
    onRaised: (fn) => e.notifications.center.onRaised(fn),
    focusOn: (link) => {
      showWindow();
      void win?.webContents.executeJavaScript(`window.location.hash = ${JSON.stringify(link)}`);
    },
  });
  const started = await e.start();

  const icon = (name: string) => nativeImage.createFromPath(join(resources, name)).resize({ width: 18, height: 18 });
  const tray = createTray({
    Tray,
    Menu,
    clipboard,
    icons: { ok: icon('tray.png'), degraded: icon('tray-degraded.png') },
    onOpen: showWindow,
    onQuit: () => {
      quitting = true;
      app.quit();
    },
  });
  tray.update(e.health());
  e.bus.on('health', (h) => tray.update(h));
  if (started.error) e.log.warn('proxy.notListening', { detail: started.error });
  showWindow();
}

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', showWindow);
  app.on('activate', showWindow);
  app.on('before-quit', () => {
    quitting = true;
  });
  app.on('will-quit', (ev) => {
    if (engine) {
      ev.preventDefault();
      const e = engine;
      engine = null;
      void e.stop().finally(() => app.exit(0));
    }
  });
  // The app lives in the tray; closing every window does not quit it.
  app.on('window-all-closed', () => {});
  void app.whenReady().then(boot);
}
