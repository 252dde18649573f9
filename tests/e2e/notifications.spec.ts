// Notifications (issue 23): a key the provider keeps rejecting raises a notification; the bell in
// the sidebar shows one unread; following the item opens the Connections page and marks it read;
// muting that kind in settings stops the next one.
import type { Page } from '@playwright/test';
import type { FakeUpstream } from '../support/fakeUpstream';
import type { Headless } from './headless';
import { expect, test } from './fixtures';
import { findJargon } from './jargon';
import { addConnection, clientKey, goTo, openDashboard, sendMessage } from './ui';

const rejected = { status: 401, json: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } };

interface CooldownEntry {
  connectionId: string;
  name: string;
  status: string;
}

/** Asks through the proxy until the provider's rejections have put the connection out of service. */
async function rejectUntilTerminal(app: Headless, fake: FakeUpstream, key: string, name: string): Promise<void> {
  fake.script({ key, path: '/v1/messages' }, [rejected]);
  const client = await clientKey(app);
  await expect
    .poll(
      async () => {
        await sendMessage(app, client);
        const view = await app.api<{ connections: CooldownEntry[] }>('GET', '/api/resilience/cooldowns');
        return view.connections.find((c) => c.name === name)?.status;
      },
      { timeout: 20_000, intervals: [600, 1_000, 1_000] },
    )
    .toBe('expired');
}

const bell = (page: Page) => page.getByTestId('notification-bell');

test('a rejected key raises a notification whose link opens Connections and marks it read; muting stops the next', async ({ page, app, fake }, info) => {
  // Short cooldowns, so three rejections in a row take well under a second.
  await app.api('PATCH', '/api/settings', { 'connectionCooldown.apikeyBaseMs': 100 });
  await openDashboard(page, app);
  await expect(page.getByTestId('notification-unread')).toHaveCount(0);
  await goTo(page, 'Connections');
  await addConnection(page, { name: 'Alpha', baseUrl: fake.anthropicUrl, apiKey: 'key-alpha-0001' });

  await rejectUntilTerminal(app, fake, 'key-alpha-0001', 'Alpha');
  await expect(page.getByTestId('notification-unread')).toHaveText('1');

  // The feed: the item, its words, a link to the page that explains it.
  await goTo(page, 'Request log');
  await bell(page).click();
  const panel = page.getByTestId('notification-panel');
  await expect(panel).toBeVisible();
  const item = panel.getByTestId('notification').filter({ hasText: 'Alpha stopped working' });
  await expect(item).toHaveAttribute('data-read', 'false');
  await expect(item).toContainText('rejected its key');
  expect(findJargon(await panel.innerText())).toEqual([]);
  await page.screenshot({ path: info.outputPath('notification-feed.png'), fullPage: true });

  await item.getByRole('link').click();
  await expect(page.getByRole('heading', { level: 1, name: 'Connections' })).toBeVisible();
  expect(new URL(page.url()).hash).toBe('#/connections');
  await expect(page.getByTestId('notification-unread')).toHaveCount(0);
  await bell(page).click();
  await expect(page.getByTestId('notification-panel').getByTestId('notification')).toHaveAttribute('data-read', 'true');
  await page.keyboard.press('Escape');
  await expect.poll(async () => (await app.api<{ unread: number }>('GET', '/api/notifications')).unread).toBe(0);

  // Mute that kind in settings: the next rejected key raises nothing.
  await page.goto(`${app.managementUrl}/#/settings/notifications`);
  const mutes = page.getByTestId('notification-mutes');
  await mutes.getByLabel('A connection stops working (rejected key, expired sign-in)').check();
  await expect
    .poll(async () => (await app.api<{ muted: string[] }>('GET', '/api/notifications')).muted)
    .toEqual(['connection-terminal']);
  await expect(mutes.getByLabel('A connection stops working (rejected key, expired sign-in)')).toBeChecked();
  await page.screenshot({ path: info.outputPath('notification-mutes.png'), fullPage: true });

  await goTo(page, 'Connections');
  await addConnection(page, { name: 'Beta', baseUrl: fake.anthropicUrl, apiKey: 'key-beta-0002' });
  await rejectUntilTerminal(app, fake, 'key-beta-0002', 'Beta');
  const feed = await app.api<{ items: { title: string }[]; unread: number }>('GET', '/api/notifications');
  expect(feed.items.map((n) => n.title).filter((t) => t.includes('stopped working'))).toEqual(['Alpha stopped working']);
  await expect(page.getByTestId('notification-unread')).toHaveCount(0);
});
