// The shells' small pure parts: the tray's health summary and menu (desktop) and the headless
// shell's command line.
import { describe, expect, it } from 'vitest';
import { createTray, healthSummary, type TrayDeps } from '../../../src/main/desktop/tray';
import { resolveDataDir } from '../../../src/main/paths';
import { parseArgs } from '../../../src/main/serve';
import type { BreakerView, HealthView } from '../../../src/shared/model';

function health(over: Partial<HealthView> = {}, conns: Partial<HealthView['connections']> = {}): HealthView {
  return {
    status: 'ok',
    version: '0.1.0',
    uptime: 5,
    now: 0,
    proxy: { port: 8480, url: 'http://127.0.0.1:8480', listening: true, error: null },
    breakers: [],
    store: { unreadable: [] },
    ...over,
    connections: { total: 2, enabled: 2, active: 2, cooling: 0, terminal: 0, ...conns },
  };
}

const breaker = (provider: string, state: BreakerView['state']) => ({ provider, state }) as BreakerView;

describe('healthSummary', () => {
  it('says how many connections are healthy and where the proxy listens', () => {
    expect(healthSummary(health())).toBe('2 healthy · proxy :8480');
  });

  it('mentions cooling connections, connections that need attention and tripped providers', () => {
    const h = health(
      { status: 'degraded', breakers: [breaker('glm', 'OPEN'), breaker('anthropic', 'HALF_OPEN'), breaker('x', 'CLOSED')] },
      { active: 1, cooling: 2, terminal: 1 },
    );
    expect(healthSummary(h)).toBe('1 healthy, 2 cooling down, 1 need attention, 2 providers tripped · proxy :8480');
    expect(healthSummary(health({ breakers: [breaker('glm', 'OPEN')] }))).toContain('1 provider tripped');
  });

  it('says the proxy is not listening, with the reason', () => {
    const h = health({ proxy: { port: null, url: null, listening: false, error: 'port 8480 is already in use' } });
    expect(healthSummary(h)).toBe('Proxy not listening: port 8480 is already in use');
    expect(healthSummary(health({ proxy: { port: null, url: null, listening: false, error: null } }))).toBe('Proxy not listening');
  });
});

describe('createTray', () => {
  type Item = { label?: string; type?: string; enabled?: boolean; click?: () => void };
  function fakeTray() {
    const state = { tooltip: '', image: '', menu: [] as Item[], clicks: [] as string[], copied: [] as string[], destroyed: false };
    let onClick: (() => void) | null = null;
    const deps: TrayDeps = {
      Tray: class {
        constructor(image: unknown) {
          state.image = String(image);
        }
        setToolTip(t: string) {
          state.tooltip = t;
        }
        setImage(i: unknown) {
          state.image = String(i);
        }
        setContextMenu(m: Item[]) {
          state.menu = m;
        }
        on(_e: string, fn: () => void) {
          onClick = fn;
        }
        destroy() {
          state.destroyed = true;
        }
      } as never,
      Menu: { buildFromTemplate: (t: Item[]) => t } as never,
      clipboard: { writeText: ((t: string) => void state.copied.push(t)) as never },
      icons: { ok: 'ok-icon', degraded: 'degraded-icon' } as never,
      onOpen: () => void state.clicks.push('open'),
      onQuit: () => void state.clicks.push('quit'),
    };
    return { deps, state, click: () => onClick?.() };
  }
  const item = (menu: Item[], label: RegExp) => menu.find((i) => i.label && label.test(i.label))!;

  it('starts with a neutral status, then shows health, the degraded icon and a copyable proxy URL', () => {
    const { deps, state, click } = fakeTray();
    const tray = createTray(deps);
    expect(state.tooltip).toBe('Switchyard — Starting…');
    expect(item(state.menu, /Copy proxy URL/).enabled).toBe(false);

    tray.update(health({ status: 'degraded' }, { active: 1, cooling: 1 }));
    expect(state.tooltip).toBe('Switchyard — 1 healthy, 1 cooling down · proxy :8480');
    expect(state.image).toBe('degraded-icon');
    expect(state.menu[0]).toMatchObject({ label: '1 healthy, 1 cooling down · proxy :8480', enabled: false });
    item(state.menu, /Copy proxy URL/).click!();
    expect(state.copied).toEqual(['http://127.0.0.1:8480']);

    tray.update(health());
    expect(state.image).toBe('ok-icon');
    item(state.menu, /Open/).click!();
    click();
    item(state.menu, /Quit/).click!();
    expect(state.clicks).toEqual(['open', 'open', 'quit']);
    tray.destroy();
    expect(state.destroyed).toBe(true);
  });
});

describe('serve parseArgs', () => {
  it('reads ports, data dir and flags, with --x=y or --x y', () => {
    expect(parseArgs(['--port', '9000', '--proxy-port=9001', '--data-dir', '/tmp/sy', '--ready-json'])).toEqual({
      port: 9000,
      proxyPort: 9001,
      dataDir: '/tmp/sy',
      readyJson: true,
      help: false,
    });
    expect(parseArgs(['--port=0'])).toMatchObject({ port: 0 });
    expect(parseArgs(['-h'])).toMatchObject({ help: true });
    expect(parseArgs([])).toEqual({ readyJson: false, help: false });
  });

  it.each([
    [['--verbose'], /unknown option --verbose/],
    [['--port'], /--port needs a port number/],
    [['--port', 'abc'], /--port needs a port number/],
    [['--port', '70000'], /--port needs a port number/],
    [['--proxy-port', '-1'], /--proxy-port needs a port number/],
    [['--data-dir'], /--data-dir needs a directory/],
    [['--data-dir='], /--data-dir needs a directory/],
  ])('answers an error for %j', (argv, message) => {
    const r = parseArgs(argv);
    expect('error' in r && r.error).toMatch(message);
  });
});

describe('resolveDataDir', () => {
  it('prefers --data-dir, then SWITCHYARD_DATA_DIR, then ~/.switchyard', () => {
    expect(resolveDataDir('/tmp/a', { SWITCHYARD_DATA_DIR: '/tmp/b' })).toBe('/tmp/a');
    expect(resolveDataDir(undefined, { SWITCHYARD_DATA_DIR: '/tmp/b' })).toBe('/tmp/b');
    expect(resolveDataDir(undefined, {})).toMatch(/\.switchyard$/);
  });
});
