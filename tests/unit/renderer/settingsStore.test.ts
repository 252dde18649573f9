// Settings store: input is checked before anything is sent; a refused value stays with its error;
// a good value is saved with its source updated; a saved value can be reset with a null patch.
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import { settingOf } from '../../../src/renderer/stores/settingsStore';
import { settingsView } from './builders';
import { testDashboard } from './fakeBridge';

const KEY = 'connectionCooldown.apikeyBaseMs';

async function started() {
  const t = testDashboard();
  await t.dash.start();
  return t;
}

describe('settings store', () => {
  it('text that is not a number shows an error and saves nothing', async () => {
    const { dash, bridge } = await started();
    expect(await dash.settings.getState().saveText(KEY, 'soon')).toBe(false);
    expect(dash.settings.getState().errors[KEY]).toBe('must be a number');
    expect(bridge.patchSettings).not.toHaveBeenCalled();
  });

  it('a number outside the range names the range and saves nothing', async () => {
    const { dash, bridge } = await started();
    expect(await dash.settings.getState().saveText(KEY, '2.5')).toBe(false);
    expect(dash.settings.getState().errors[KEY]).toBe('must be a whole number');
    expect(await dash.settings.getState().saveText('proxy.maxAttempts', '0')).toBe(false);
    expect(dash.settings.getState().errors['proxy.maxAttempts']).toBe('must be between 1 and 20');
    expect(bridge.patchSettings).not.toHaveBeenCalled();
  });

  it('a good value is sent as a number and the answer becomes the view', async () => {
    const { dash, bridge } = await started();
    bridge.patchSettings.mockResolvedValue({ ...settingsView({ [KEY]: { value: 4000, source: 'persisted' } }), adjusted: [] });
    expect(await dash.settings.getState().saveText(KEY, ' 4_000 ')).toBe(true);
    expect(bridge.patchSettings).toHaveBeenCalledWith({ patch: { [KEY]: 4000 } });
    expect(settingOf(dash.settings.getState().view, KEY)).toMatchObject({ value: 4000, source: 'persisted' });
    expect(dash.settings.getState().notices[KEY]).toBe('Saved');
    expect(dash.settings.getState().errors[KEY]).toBeUndefined();
  });

  it('booleans and JSON are checked with the shared schema', async () => {
    const { dash, bridge } = await started();
    expect(await dash.settings.getState().save('streamStallCooldown.enabled', 'yes')).toBe(false);
    expect(dash.settings.getState().errors['streamStallCooldown.enabled']).toBe('must be true or false');
    expect(await dash.settings.getState().saveText('modelLockout.errorCodes', '[429,')).toBe(false);
    expect(dash.settings.getState().errors['modelLockout.errorCodes']).toMatch(/^is not valid JSON/);
    expect(bridge.patchSettings).not.toHaveBeenCalled();
  });

  it('the longest lockout may not be set below the first lockout', async () => {
    const { dash, bridge } = await started();
    expect(await dash.settings.getState().saveText('modelLockout.maxCooldownMs', '1000')).toBe(false);
    expect(dash.settings.getState().errors['modelLockout.maxCooldownMs']).toBe('must be at least the first lockout duration');
    expect(bridge.patchSettings).not.toHaveBeenCalled();
  });

  it('an error the engine names is shown next to that setting', async () => {
    const { dash, bridge } = await started();
    bridge.patchSettings.mockRejectedValue(new BridgeError('invalid_input', `${KEY}: refused by the engine`, KEY));
    expect(await dash.settings.getState().saveText(KEY, '4000')).toBe(false);
    expect(dash.settings.getState().errors[KEY]).toBe('refused by the engine');
    expect(settingOf(dash.settings.getState().view, KEY)?.source).toBe('default');
  });

  it('reset removes the saved value (a null patch)', async () => {
    const { dash, bridge } = await started();
    bridge.patchSettings.mockResolvedValue({ ...settingsView(), adjusted: [] });
    expect(await dash.settings.getState().reset(KEY)).toBe(true);
    expect(bridge.patchSettings).toHaveBeenCalledWith({ patch: { [KEY]: null } });
    expect(dash.settings.getState().notices[KEY]).toBe('Reset to default');
  });

  it('after reset, a value from the environment is named as such', async () => {
    const { dash, bridge } = await started();
    bridge.patchSettings.mockResolvedValue({ ...settingsView({ [KEY]: { value: 9000, source: 'env' } }), adjusted: [] });
    await dash.settings.getState().reset(KEY);
    expect(dash.settings.getState().notices[KEY]).toBe('Saved value removed; the environment value applies');
  });

  it('"Saved" goes as soon as the field is edited again', async () => {
    const { dash, bridge } = await started();
    bridge.patchSettings.mockResolvedValue({ ...settingsView({ [KEY]: { value: 4000, source: 'persisted' } }), adjusted: [] });
    await dash.settings.getState().saveText(KEY, '4000');
    expect(dash.settings.getState().notices[KEY]).toBe('Saved');
    dash.settings.getState().clearError(KEY);
    expect(dash.settings.getState().notices[KEY]).toBeUndefined();
  });

  it('"Saved" goes when the value changes under it (another window saved another value)', async () => {
    const { dash, bridge } = await started();
    bridge.patchSettings.mockResolvedValue({ ...settingsView({ [KEY]: { value: 4000, source: 'persisted' } }), adjusted: [] });
    await dash.settings.getState().saveText(KEY, '4000');
    // The same value pushed again keeps the notice; a different one drops it.
    bridge.emit('settings', settingsView({ [KEY]: { value: 4000, source: 'persisted' } }));
    expect(dash.settings.getState().notices[KEY]).toBe('Saved');
    bridge.emit('settings', settingsView({ [KEY]: { value: 5000, source: 'persisted' } }));
    expect(dash.settings.getState().notices[KEY]).toBeUndefined();
  });

  it('a refused value replaces an earlier "Saved" with the reason, and keeps the saved value', async () => {
    const { dash, bridge } = await started();
    bridge.patchSettings.mockResolvedValue({ ...settingsView({ [KEY]: { value: 4000, source: 'persisted' } }), adjusted: [] });
    await dash.settings.getState().saveText(KEY, '4000');
    expect(await dash.settings.getState().saveText(KEY, '5')).toBe(false);
    expect(dash.settings.getState().notices[KEY]).toBeUndefined();
    expect(dash.settings.getState().errors[KEY]).toBe('must be between 100 and 86,400,000 ms (100 ms – 1 day)');
    expect(bridge.patchSettings).toHaveBeenCalledTimes(1);
    expect(settingOf(dash.settings.getState().view, KEY)?.value).toBe(4000);
  });

  it('a value set on the command line is not sent, and the refusal says why in words', async () => {
    const t = testDashboard();
    t.bridge.getSettings.mockResolvedValue(settingsView({ 'proxy.port': { value: 9300, source: 'cli', cliFlag: '--proxy-port' } }));
    await t.dash.start();
    expect(await t.dash.settings.getState().saveText('proxy.port', '9400')).toBe(false);
    expect(t.bridge.patchSettings).not.toHaveBeenCalled();
    expect(t.dash.settings.getState().errors['proxy.port']).toBe(
      'set on the command line (--proxy-port) for this run, so it cannot be changed here; start Switchyard without --proxy-port to change it here',
    );
  });

  it("the engine's command-line refusal is put in words, not its code", async () => {
    const { dash, bridge } = await started();
    bridge.patchSettings.mockRejectedValue(new BridgeError('set_on_command_line', 'proxy.port is set by --proxy-port for this run', 'proxy.port', 409));
    expect(await dash.settings.getState().saveText('proxy.port', '9400')).toBe(false);
    expect(dash.settings.getState().errors['proxy.port']).toMatch(/^set on the command line/);
  });

  it('saving a value the environment overrides says the environment still wins', async () => {
    const { dash, bridge } = await started();
    const k = 'requestQueue.autoEnableApiKeyProviders';
    bridge.patchSettings.mockResolvedValue({ ...settingsView({ [k]: { value: true, source: 'env', persisted: false, envName: 'RATE_LIMIT_AUTO_ENABLE' } }), adjusted: [] });
    await dash.settings.getState().save(k, false);
    expect(dash.settings.getState().notices[k]).toBe('Saved; the environment variable still wins while it is set');
  });

  it('a pushed view replaces the current one', async () => {
    const { dash, bridge } = await started();
    bridge.emit('settings', settingsView({ [KEY]: { value: 7000, source: 'persisted' } }));
    expect(settingOf(dash.settings.getState().view, KEY)?.value).toBe(7000);
  });
});
