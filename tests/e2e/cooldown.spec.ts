// Acceptance for the dashboard (issue 6): two connections added through the UI, one answers 429
// with Retry-After: 60 and an account-wide signal (a rejected unified limit: without one, a 429
// rests only the model that was asked for), a request goes through the proxy, the dashboard shows that connection
// cooling down with the reason, clearing it from the Cooldown manager makes it healthy, and the next
// request reaches it. Needs the resilience core (connection cooldowns) in the engine.
import { expect, test } from './fixtures';
import { addConnection, clientKey, connectionCard, goTo, openDashboard, sendMessage } from './ui';

test('a 429 with Retry-After cools only that connection until it is cleared from the dashboard', async ({ page, app, fake }, info) => {
  await openDashboard(page, app);
  await goTo(page, 'Connections');
  await addConnection(page, { name: 'Alpha', baseUrl: fake.anthropicUrl, apiKey: 'key-alpha-0001', priority: 0 });
  await addConnection(page, { name: 'Beta', baseUrl: fake.anthropicUrl, apiKey: 'key-beta-0002', priority: 1 });

  fake.script({ key: 'key-alpha-0001', path: '/v1/messages' }, [
    {
      status: 429,
      headers: { 'retry-after': '60', 'anthropic-ratelimit-unified-status': 'rejected' },
      json: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } },
    },
  ]);
  const key = await clientKey(app);

  // Alpha answers 429; the proxy fails over to Beta, so the agent still gets its answer.
  expect(await sendMessage(app, key)).toBe(200);
  expect(fake.requestsFor({ key: 'key-alpha-0001', path: '/v1/messages' })).toHaveLength(1);
  expect(fake.requestsFor({ key: 'key-beta-0002', path: '/v1/messages' })).toHaveLength(1);

  // The Connections page shows Alpha cooling down (countdown near the upstream's 60 s) with the reason; Beta stays healthy.
  const alpha = connectionCard(page, 'Alpha');
  await expect(alpha.getByTestId('connection-state')).toHaveText(/Cooling down · (1m 00s|[1-5]?\ds)/);
  await expect(alpha.getByTestId('connection-reason')).toContainText('Rate limited');
  await expect(alpha.getByTestId('connection-reason')).toContainText('429');
  await expect(connectionCard(page, 'Beta').getByTestId('connection-state')).toHaveText(/Healthy/);
  await page.screenshot({ path: info.outputPath('connections-cooling.png'), fullPage: true });

  // The Cooldown manager lists it with the reason.
  await goTo(page, 'Cooldown manager');
  const row = page.getByTestId('cooling-row').filter({ hasText: 'Alpha' });
  await expect(row).toContainText('Rate limited');
  await expect(page.getByTestId('cooling-row')).toHaveCount(1);
  await page.screenshot({ path: info.outputPath('cooldown-manager.png'), fullPage: true });

  // The request log shows the failover: Alpha's 429, then Beta served it.
  await goTo(page, 'Request log');
  const logRow = page.getByTestId('log-row').first();
  await expect(logRow).toContainText('Beta');
  await logRow.getByRole('button', { name: /Details of the/ }).click();
  const attempts = page.getByRole('table', { name: 'Attempts' });
  await expect(attempts.getByRole('row').nth(1)).toContainText('Alpha');
  await expect(attempts.getByRole('row').nth(1)).toContainText('429');
  await expect(attempts.getByRole('row').nth(2)).toContainText('served');
  await page.screenshot({ path: info.outputPath('request-log-failover.png'), fullPage: true });

  // Alpha recovers upstream; clearing it puts it back in routing at once.
  fake.reset();
  await goTo(page, 'Cooldown manager');
  await page.getByRole('button', { name: 'Clear Alpha' }).click();
  await expect(page.getByText('Nothing is cooling down')).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Cleared 1 connection' })).toBeVisible();
  await goTo(page, 'Connections');
  await expect(alpha.getByTestId('connection-state')).toHaveText(/Healthy/);

  // The next request reaches Alpha (priority 0) again.
  expect(await sendMessage(app, key)).toBe(200);
  const last = (await app.api<{ entries: { connectionName: string | null; skipped: unknown[] }[] }>('GET', '/api/logs?limit=1')).entries[0]!;
  expect(last.connectionName, `skipped: ${JSON.stringify(last.skipped)}`).toBe('Alpha');
  expect(fake.requestsFor({ key: 'key-alpha-0001', path: '/v1/messages' })).toHaveLength(1);
  expect(fake.requestsFor({ key: 'key-beta-0002', path: '/v1/messages' })).toHaveLength(0);
  await goTo(page, 'Request log');
  await expect(page.getByTestId('log-row').first()).toContainText('Alpha');
  await page.screenshot({ path: info.outputPath('request-log-recovered.png'), fullPage: true });
});

test('a selection of cooling connections, or all of a provider, is cleared at once', async ({ page, app, fake }) => {
  // Queue protection off, so this test is only about cooldowns (the queue's own pause on a
  // Retry-After is not part of the Cooldown manager).
  await app.api('PATCH', '/api/settings', { 'requestQueue.autoEnableApiKeyProviders': false });
  for (const [name, secret, priority] of [
    ['Alpha', 'key-alpha-0001', 0],
    ['Beta', 'key-beta-0002', 1],
  ] as const) {
    await app.api('POST', '/api/providers', { name, kind: 'anthropic', baseUrl: fake.anthropicUrl, secret, priority });
  }
  fake.script({ path: '/v1/messages' }, [{ status: 429, headers: { 'retry-after': '120', 'anthropic-ratelimit-unified-status': 'rejected' }, json: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } }]);
  const key = await clientKey(app);
  expect(await sendMessage(app, key)).toBe(429);

  await openDashboard(page, app);
  await goTo(page, 'Cooldown manager');
  await expect(page.getByTestId('cooling-row')).toHaveCount(2);
  await page.getByRole('checkbox', { name: 'Select all cooling connections' }).check();
  await page.getByRole('button', { name: 'Clear selected (2)' }).click();
  await expect(page.getByText('Nothing is cooling down')).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Cleared 2 connections' })).toBeVisible();

  expect(await sendMessage(app, key)).toBe(429);
  await expect(page.getByTestId('cooling-row')).toHaveCount(2);
  await page.getByRole('combobox', { name: 'Provider to clear' }).selectOption('anthropic');
  await page.getByRole('button', { name: 'Clear provider' }).click();
  await expect(page.getByText('Nothing is cooling down')).toBeVisible();
  const after = await app.api<{ connections: { status: string }[] }>('GET', '/api/resilience/cooldowns');
  expect(after.connections.map((c) => c.status)).toEqual(['active', 'active']);
});
