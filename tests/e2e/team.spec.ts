// Team mode in the dashboard (issue 26), with two headless shells joined to one team through a real
// redis-server: the Team page (status, where each value comes from, the key, the role, "Publish
// now"), a follower's connections, combos and settings marked "Managed by team (published by …)"
// and read-only, a follower whose key does not match saying why, and the sidebar's degraded badge
// while Redis is down. Every state of the Team page passes the plain-words check.
import { expect, test, type Page } from '@playwright/test';
import { FakeUpstream } from '../support/fakeUpstream';
import { hasRedisServer, RedisServer } from '../support/redisServer';
import { startServe, type Headless } from './headless';
import { findJargon } from './jargon';
import { connectionCard, openDashboard } from './ui';

test.skip(!hasRedisServer(), 'redis-server is not installed');
test.describe.configure({ mode: 'serial' });

let redis: RedisServer;
let upstream: FakeUpstream;
let alice: Headless;
let bob: Headless;

test.beforeAll(async () => {
  redis = await RedisServer.start();
  upstream = await FakeUpstream.start();
  const env = { SWITCHYARD_REDIS_URL: redis.url, SWITCHYARD_TEAM: `e2e-${process.pid}` };
  alice = await startServe(env);
  bob = await startServe(env);
});

test.afterAll(async () => {
  await Promise.allSettled([alice?.stop(), bob?.stop()]);
  await upstream?.close();
  await redis?.stop();
});

/** What the page says, without technical names and typed snippets (as plainWords.spec.ts reads it). */
async function jargonOn(page: Page): Promise<string[]> {
  const text = (await page.evaluate(`(() => {
    const hidden = [...document.querySelectorAll('[data-tech-name], [data-snippet]')];
    for (const el of hidden) el.style.display = 'none';
    const t = document.body.innerText;
    for (const el of hidden) el.style.display = '';
    return t;
  })()`)) as string;
  return findJargon(text).map((h) => `${h.rule}: ${h.text} …${text.slice(Math.max(0, h.index - 50), h.index + 40).replace(/\s+/g, ' ')}…`);
}

async function openTeam(page: Page, app: Headless): Promise<void> {
  await openDashboard(page, app);
  await page.evaluate(`window.location.hash = '#/team'`);
  await expect(page.getByRole('heading', { level: 1, name: 'Team', exact: true })).toBeVisible();
  await expect(page.getByTestId('team-state')).not.toHaveText('');
}

test('the publisher joins, names itself, makes a key and publishes from the Team page', async ({ page }) => {
  await alice.api('POST', '/api/providers', { name: 'Team OpenAI key', kind: 'openai-compatible', provider: 'openai', baseUrl: upstream.openaiUrl, secret: 'sk-e2e-team-secret-1111', models: ['gpt-team'] });
  const conns = await alice.api<{ id: string }[]>('GET', '/api/providers');
  await alice.api('POST', '/api/combos', { name: 'team-pool', targets: [{ connectionId: conns[0]!.id, model: 'gpt-team' }] });
  await alice.api('PATCH', '/api/settings', { 'proxy.maxAttempts': 3 });

  await openTeam(page, alice);
  await expect(page.getByTestId('team-state')).toHaveText('Connected');
  await expect(page.getByTestId('sidebar').getByTestId('team-badge')).toHaveAttribute('data-state', 'connected');
  // The address comes from the environment: shown with where it comes from, not editable here.
  const address = page.getByRole('textbox', { name: 'Redis address' });
  await expect(address).toHaveValue(redis.url);
  await expect(address).toHaveAttribute('readonly', '');
  await expect(page.getByText('Set by the environment variable')).toHaveCount(2);

  await page.getByRole('textbox', { name: "This instance's name" }).fill('Alice');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(page.getByTestId('team-status')).toContainText('Alice');

  await expect(page.getByTestId('team-key')).toContainText('No key yet.');
  await page.getByRole('button', { name: 'Make a key' }).click();
  await expect(page.getByTestId('team-key')).toContainText('fingerprint');
  await page.getByRole('radio', { name: /^Publish/ }).click();
  await expect(page.getByRole('radio', { name: /^Publish/ })).toBeChecked();
  await expect(page.getByTestId('team-sharing')).toContainText('Published');
  await page.getByRole('button', { name: 'Publish now' }).click();
  await expect(page.getByTestId('team-sharing')).toContainText('publication 2');
  expect(await jargonOn(page)).toEqual([]);
});

test("the follower pastes the key, follows, and shows what the team manages as read-only, naming the publisher", async ({ page }) => {
  const { key } = await alice.api<{ key: string }>('POST', '/api/team/key/reveal');
  await openTeam(page, bob);
  await page.getByRole('textbox', { name: "This instance's name" }).fill('Bob');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByLabel("Paste the team's key").fill(key);
  await page.getByRole('button', { name: 'Use this key' }).click();
  await expect(page.getByTestId('team-key')).toContainText('fingerprint');
  const fingerprint = (await alice.api<{ settings: { key: { fingerprint: string } } }>('GET', '/api/team')).settings.key.fingerprint;
  await expect(page.getByTestId('team-key')).toContainText(fingerprint);
  await page.getByRole('radio', { name: /^Follow/ }).click();
  await expect(page.getByRole('radio', { name: /^Follow/ })).toBeChecked();
  await expect(page.getByTestId('team-sharing')).toContainText('Following Alice');
  await expect(page.getByTestId('team-publisher')).toContainText('Alice');
  expect(await jargonOn(page)).toEqual([]);

  await page.evaluate(`window.location.hash = '#/connections'`);
  const card = connectionCard(page, 'Team OpenAI key');
  await expect(card.getByTestId('managed-by-team')).toHaveText('Managed by team (published by Alice)');
  await expect(card.getByRole('button', { name: 'Edit Team OpenAI key' })).toHaveCount(0);
  await expect(card.getByRole('switch', { name: 'Enabled' })).toBeDisabled();
  expect(await jargonOn(page)).toEqual([]);

  await page.evaluate(`window.location.hash = '#/combos'`);
  const combo = page.getByRole('article', { name: 'team-pool' });
  await expect(combo.getByTestId('managed-by-team')).toHaveText('Managed by team (published by Alice)');
  await expect(combo.getByRole('button', { name: 'Edit' })).toHaveCount(0);

  await page.evaluate(`window.location.hash = '#/settings/failover'`);
  await expect(page.getByTestId('settings-managed')).toContainText('Managed by team (published by Alice)');
  const row = page.locator('[data-setting="proxy.maxAttempts"]');
  await expect(row.getByTestId('managed-by-team')).toBeVisible();
  await expect(row.getByRole('textbox')).toHaveAttribute('readonly', '');
  // This workstation's own proxy port stays its own.
  await page.evaluate(`window.location.hash = '#/settings/network'`);
  await expect(page.locator('[data-setting="proxy.port"]')).toBeVisible();
  await expect(page.locator('[data-setting="proxy.port"]').getByTestId('managed-by-team')).toHaveCount(0);
  expect(await jargonOn(page)).toEqual([]);

  // A change on the publisher shows up here without a reload.
  const id = (await alice.api<{ id: string }[]>('GET', '/api/providers'))[0]!.id;
  await alice.api('PATCH', `/api/providers/${id}`, { name: 'Team OpenAI key (renamed)' });
  await page.evaluate(`window.location.hash = '#/connections'`);
  await expect(connectionCard(page, 'Team OpenAI key (renamed)').getByTestId('managed-by-team')).toBeVisible();
});

test('a follower whose key is not the publisher’s says so and keeps what it has', async ({ page }) => {
  await bob.api('POST', '/api/team/key');
  await alice.api('POST', '/api/team/publish');
  await openTeam(page, bob);
  await expect(page.getByTestId('team-config-error')).toContainText("This workstation's team key is not the one Alice published with");
  expect(await jargonOn(page)).toEqual([]);
  // The right key again: following resumes.
  const { key } = await alice.api<{ key: string }>('POST', '/api/team/key/reveal');
  await page.getByLabel("Paste the team's key").fill(key);
  await page.getByRole('button', { name: 'Use this key' }).click();
  await expect(page.getByTestId('team-sharing')).toContainText('Following Alice');
});

test('the sidebar shows the team degraded while Redis is down, and connected again when it is back', async ({ page }) => {
  await openTeam(page, bob);
  const badge = page.getByTestId('sidebar').getByTestId('team-badge');
  await expect(badge).toHaveAttribute('data-state', 'connected');
  await redis.kill();
  try {
    await expect(badge).toHaveAttribute('data-state', 'degraded');
    await expect(badge).toHaveText('Team degraded');
    await expect(page.getByRole('link', { name: /^Team/ }).first().locator('.nav-count')).toHaveText('!');
    await expect(page.getByTestId('team-state')).toHaveText('Degraded');
    await expect(page.getByTestId('team-reason')).not.toBeEmpty();
    await expect(page.getByText('Requests are still served')).toBeVisible();
    expect(await jargonOn(page)).toEqual([]);
  } finally {
    await redis.up();
  }
  await expect(badge).toHaveAttribute('data-state', 'connected', { timeout: 15_000 });
  const feed = await bob.api<{ items: { kind: string; title: string }[] }>('GET', '/api/notifications');
  expect(feed.items.filter((n) => n.kind === 'team-link').map((n) => n.title)).toEqual([expect.stringMatching(/^Back in touch/), 'Lost the link to the team']);
});
