// Acceptance for issue 22's one health model: what the dashboard says about a connection never
// contradicts the engine. During a breaker trip no card reads "Healthy" beside the open breaker and
// the counts agree with the cards; a model lockout reads as partly available, never "Healthy"; an
// engine outage shows in the sidebar; and re-enabling a locked model lifts every layer that held it,
// so the very next request is served by it without a queue wait.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import type { Headless } from './headless';
import { clientKey, connectionCard, goTo, openDashboard, sendMessage } from './ui';

const overloaded = { status: 503, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };

async function addApi(app: Headless, name: string, secret: string, baseUrl: string, priority: number): Promise<void> {
  await app.api('POST', '/api/providers', { name, kind: 'anthropic', baseUrl, secret, priority });
}

/** Every card's state badge agrees with the counts, and none reads "Healthy" beside a breaker that is not closed. */
async function expectCardsAgreeWithCounts(page: Page, names: string[]): Promise<void> {
  let healthy = 0;
  for (const name of names) {
    const state = connectionCard(page, name).getByTestId('connection-state');
    const text = (await state.innerText()).trim();
    if (/\bOPEN\b|HALF-OPEN|DEGRADED/.test(text)) expect(text, `${name}: ${text}`).not.toMatch(/Healthy/);
    if (/^Healthy/.test(text)) healthy++;
  }
  await expect(page.getByTestId('count-healthy')).toHaveText(String(healthy));
  await expect(page.getByTestId('sidebar-counts')).toContainText(`${healthy} healthy`);
}

test('during a breaker trip no card reads "Healthy" beside the open breaker, and the counts agree', async ({ page, app, fake }, info) => {
  await app.api('PATCH', '/api/settings', {
    'providerBreaker.apikey.failureThreshold': 1,
    'providerBreaker.apikey.degradationThreshold': 1,
  });
  await addApi(app, 'Alpha', 'key-alpha-0001', fake.anthropicUrl, 0);
  await addApi(app, 'Beta', 'key-beta-0002', fake.anthropicUrl, 1);
  fake.script({ path: '/v1/messages' }, [overloaded]);
  const key = await clientKey(app);
  expect(await sendMessage(app, key)).toBe(503);
  const breakers = await app.api<{ provider: string; state: string }[]>('GET', '/api/resilience/breakers');
  expect(breakers.find((b) => b.provider === 'anthropic')?.state).toBe('OPEN');

  await openDashboard(page, app);
  await goTo(page, 'Connections');
  for (const name of ['Alpha', 'Beta']) {
    await expect(connectionCard(page, name).getByTestId('connection-state')).toContainText('OPEN');
    await expect(connectionCard(page, name).getByTestId('connection-state')).not.toContainText('Healthy');
  }
  await expect(page.getByTestId('count-healthy')).toHaveText('0');
  await expectCardsAgreeWithCounts(page, ['Alpha', 'Beta']);
  await page.screenshot({ path: info.outputPath('breaker-trip.png'), fullPage: true });

  // The Cooldown manager shows the same counts.
  await goTo(page, 'Cooldown manager');
  await expect(page.getByTestId('count-healthy')).toHaveText('0');
});

test('a model lockout after a 429 with Retry-After: the card says so; re-enable, and the next request is served without a wait', async ({ page, app, fake }, info) => {
  await addApi(app, 'Alpha', 'key-alpha-0001', fake.anthropicUrl, 0);
  await addApi(app, 'Beta', 'key-beta-0002', fake.anthropicUrl, 1);
  // A plain 429 (nothing says the account is spent) with Retry-After: the engine holds only the
  // requested model on Alpha, and Alpha's queue waits out the Retry-After for that model.
  fake.script({ key: 'key-alpha-0001', path: '/v1/messages' }, [
    { status: 429, headers: { 'retry-after': '40' }, json: { type: 'error', error: { type: 'rate_limit_error', message: 'Too many requests' } } },
  ]);
  const key = await clientKey(app);
  expect(await sendMessage(app, key)).toBe(200);
  expect(fake.requestsFor({ key: 'key-beta-0002', path: '/v1/messages' })).toHaveLength(1);

  await openDashboard(page, app);
  await goTo(page, 'Connections');
  const alpha = connectionCard(page, 'Alpha');
  await expect(alpha.getByTestId('connection-state')).toContainText('Partly available');
  await expect(alpha.getByTestId('connection-state')).not.toContainText('Healthy');
  await expect(alpha.getByTestId('connection-models-held')).toContainText('claude-e2e');
  await expect(connectionCard(page, 'Beta').getByTestId('connection-state')).toHaveText(/Healthy/);
  await expect(page.getByTestId('count-limited')).toHaveText('1');
  await expectCardsAgreeWithCounts(page, ['Alpha', 'Beta']);
  await page.screenshot({ path: info.outputPath('model-lockout.png'), fullPage: true });

  // Re-enable from the Cooldown manager: the lockout and the queue's pause on that model both go.
  fake.reset();
  await goTo(page, 'Cooldown manager');
  await page.getByRole('button', { name: 'Re-enable claude-e2e on Alpha' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Re-enabled claude-e2e on Alpha' })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Still held' })).toHaveCount(0);
  await expect(page.getByText('No model is locked out')).toBeVisible();
  await expect(page.getByTestId('hold-row')).toHaveCount(0);
  const health = await app.api<{ connections: { name: string; state: string; models: unknown[] }[] }>('GET', '/api/resilience/health');
  expect(health.connections.find((c) => c.name === 'Alpha')).toMatchObject({ state: 'healthy', models: [] });
  await goTo(page, 'Connections');
  await expect(alpha.getByTestId('connection-state')).toHaveText(/Healthy/);

  // The next request goes to Alpha at once: one attempt, nothing skipped, no time in the queue.
  expect(await sendMessage(app, key)).toBe(200);
  type Log = { connectionName: string | null; skipped: unknown[]; waits: unknown[]; attempts: { connectionName: string; queuedMs: number | null }[] };
  const last = (await app.api<{ entries: Log[] }>('GET', '/api/logs?limit=1')).entries[0]!;
  expect(last.connectionName, JSON.stringify(last)).toBe('Alpha');
  expect(last.skipped).toEqual([]);
  expect(last.attempts).toHaveLength(1);
  // Not queued at all (a queue's pause or spacing would be listed among the waits), so no queue time.
  expect(last.waits).toEqual([]);
  expect(last.attempts[0]!.queuedMs ?? 0).toBe(0);
  expect(fake.requestsFor({ key: 'key-alpha-0001', path: '/v1/messages' })).toHaveLength(1);
});

test('when the engine goes down the sidebar says so, not "Engine ok"', async ({ page, app }, info) => {
  await openDashboard(page, app);
  await app.stop();
  await expect(page.getByTestId('health-status')).toHaveText('unreachable');
  await expect(page.getByTestId('health-status')).not.toHaveText('ok');
  await expect(page.getByTestId('link-status')).not.toHaveText('Live');
  await page.screenshot({ path: info.outputPath('engine-down.png'), fullPage: true });
});
