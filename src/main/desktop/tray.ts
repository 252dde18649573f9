// Tray: overall health at a glance, open the window, copy the proxy URL, quit.
import type { Clipboard, Menu as MenuT, NativeImage, Tray as TrayT } from 'electron';
import type { HealthView } from '../../shared/model';

export interface TrayDeps {
  Tray: new (image: NativeImage) => TrayT;
  Menu: Pick<typeof MenuT, 'buildFromTemplate'>;
  clipboard: Pick<Clipboard, 'writeText'>;
  icons: { ok: NativeImage; degraded: NativeImage };
  onOpen: () => void;
  onQuit: () => void;
}

export function healthSummary(h: HealthView): string {
  if (!h.proxy.listening) return `Proxy not listening${h.proxy.error ? `: ${h.proxy.error}` : ''}`;
  const parts = [`${h.connections.active} healthy`];
  if (h.connections.cooling) parts.push(`${h.connections.cooling} cooling down`);
  if (h.connections.terminal) parts.push(`${h.connections.terminal} need attention`);
  const open = h.breakers.filter((b) => b.state === 'OPEN' || b.state === 'HALF_OPEN').length;
  if (open) parts.push(`${open} provider${open > 1 ? 's' : ''} tripped`);
  return `${parts.join(', ')} · proxy :${h.proxy.port}`;
}

export function createTray(d: TrayDeps) {
  const tray = new d.Tray(d.icons.ok);
  let last: HealthView | null = null;
  const render = () => {
    const summary = last ? healthSummary(last) : 'Starting…';
    tray.setToolTip(`Switchyard — ${summary}`);
    tray.setImage(last && last.status !== 'ok' ? d.icons.degraded : d.icons.ok);
    tray.setContextMenu(
      d.Menu.buildFromTemplate([
        { label: summary, enabled: false },
        { type: 'separator' },
        { label: 'Open Switchyard', click: d.onOpen },
        {
          label: 'Copy proxy URL',
          enabled: !!last?.proxy.url,
          click: () => last?.proxy.url && d.clipboard.writeText(last.proxy.url),
        },
        { type: 'separator' },
        { label: 'Quit Switchyard', click: d.onQuit },
      ]),
    );
  };
  tray.on('click', d.onOpen);
  render();
  return {
    update(h: HealthView) {
      last = h;
      render();
    },
    destroy: () => tray.destroy(),
  };
}
