// Acceptance for the Sessions and Leases pages (issue 14): a Claude Code session pinned by the
// real SDK shows on the Sessions page with its connection, the request log says the requests
// followed the pin, Forget ends it; a key given lease access in the UI acquires a lease over
// HTTP, the Leases page shows who holds what, and Release frees it.
import Anthropic from '@anthropic-ai/sdk';
import { expect, test } from './fixtures';
import { clientKey, goTo, openDashboard } from './ui';

const SESSION = '5d1c9e2a-4b7f-4c3d-8e6a-91f0b2c3d4e5';

test('a pinned Claude Code session is listed, followed in the request log, and forgotten from the Sessions page', async ({ page, app, fake }, info) => {
  await app.api('PATCH', '/api/settings', { 'requestQueue.autoEnableApiKeyProviders': false });
  for (const name of ['Alpha', 'Beta', 'Gamma']) {
    await app.api('POST', '/api/providers', { name, kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: `key-${name.toLowerCase()}-e2e-0001`, priority: 1 });
  }
  const client = new Anthropic({ baseURL: app.proxyUrl, apiKey: await clientKey(app), maxRetries: 0 });
  const served = new Set<string | null>();
  for (let i = 0; i < 4; i++) {
    const { response } = await client.messages
      .create({ model: 'claude-e2e', max_tokens: 8, messages: [{ role: 'user', content: 'ping' }] }, { headers: { 'X-Claude-Code-Session-Id': SESSION } })
      .withResponse();
    served.add(response.headers.get('x-switchyard-selected-connection-id'));
  }
  expect(served.size).toBe(1);
  const providers = await app.api<{ id: string; name: string }[]>('GET', '/api/providers');
  const pinnedName = providers.find((p) => served.has(p.id))!.name;

  await openDashboard(page, app);
  await goTo(page, 'Sessions');
  const row = page.getByTestId('session-row');
  await expect(row).toHaveCount(1);
  await expect(row).toContainText(pinnedName);
  await expect(row).toContainText('Claude Code session');
  await expect(row).toContainText('Default');
  await expect(page.getByText('A pin ends 1 h after its session')).toBeVisible();
  await page.screenshot({ path: info.outputPath('sessions.png'), fullPage: true });

  await goTo(page, 'Request log');
  await expect(page.getByTestId('log-row').first()).toContainText('followed pin');
  await page.getByTestId('log-row').first().getByRole('button', { name: /Details of the/ }).click();
  await expect(page.getByTestId('log-affinity')).toContainText(`Followed its pin to ${pinnedName}.`);
  await expect(page.getByRole('table', { name: 'Attempts' })).toContainText("tried first: the session's pin");
  await expect(page.getByTestId('log-row').last()).toContainText('new session');

  await goTo(page, 'Sessions');
  await page.getByRole('button', { name: `Forget session ${SESSION}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Forget' }).click();
  await expect(page.getByRole('status').filter({ hasText: `Forgot session ${SESSION}` })).toBeVisible();
  await expect(page.getByText('No pinned sessions')).toBeVisible();
  expect((await app.api<{ sessions: unknown[] }>('GET', '/api/sessions')).sessions).toHaveLength(0);
});

test('lease access set in the UI, a lease acquired over HTTP, listed on the Leases page and released there', async ({ page, app, fake }, info) => {
  await app.api('PATCH', '/api/settings', { 'requestQueue.autoEnableApiKeyProviders': false });
  for (const name of ['Alpha', 'Beta']) {
    await app.api('POST', '/api/providers', { name, kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: `key-${name.toLowerCase()}-e2e-0002` });
  }
  await openDashboard(page, app);
  await goTo(page, 'Connect your agent');
  await page.getByRole('button', { name: 'Leases for Default' }).click();
  const dialog = page.getByRole('dialog', { name: 'Leases for Default' });
  await dialog.getByRole('switch', { name: 'Exclusive leases (lease:exclusive)' }).check();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog.getByRole('alert')).toHaveText('choose at least one connection this key may lease');
  await dialog.getByRole('checkbox', { name: /Beta/ }).check();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('key-leases').first()).toHaveText('1 connection');

  const key = await clientKey(app);
  const acquire = await fetch(`${app.proxyUrl}/api/v1/session-leases`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'acquire', label: 'e2e worker' }),
  });
  expect(acquire.status).toBe(200);
  const { lease } = (await acquire.json()) as { lease: { owner: string; generation: number; connectionName: string } };
  expect(lease.connectionName).toBe('Beta');

  await goTo(page, 'Leases');
  const row = page.getByTestId('lease-row');
  await expect(row).toHaveCount(1);
  await expect(row).toContainText('Default');
  await expect(row).toContainText('e2e worker');
  await expect(row).toContainText('Beta');
  await expect(row).toContainText(String(lease.generation));
  await expect(row).toContainText(/4m 5\ds|5m 00s/);
  await page.screenshot({ path: info.outputPath('leases.png'), fullPage: true });

  await page.getByRole('button', { name: 'Release the lease on Beta' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Release lease' }).click();
  await expect(page.getByRole('status').filter({ hasText: "Released Default's lease on Beta" })).toBeVisible();
  await expect(page.getByText('No active leases')).toBeVisible();

  const client = new Anthropic({ baseURL: app.proxyUrl, apiKey: key, maxRetries: 0 });
  const refused = await client.messages
    .create(
      { model: 'claude-e2e', max_tokens: 8, messages: [{ role: 'user', content: 'ping' }] },
      { headers: { 'X-Switchyard-Lease-Owner': lease.owner, 'X-Switchyard-Lease-Generation': String(lease.generation) } },
    )
    .catch((e: { status?: number }) => e);
  expect((refused as { status?: number }).status).toBe(404);
  expect(fake.requests).toHaveLength(0);
});
