// Acceptance for the request log (issue 22) in Chromium against the built headless shell: each row
// shows the model asked for → the model a mapping served, the client key's name and the request id
// the agent received (x-switchyard-request-id); a search by that id finds the row; the status and
// time-range filters narrow the rows; a queue wait (the upstream's retry hint) shows its reason in
// plain words; and what the page says passes the jargon check.
import OpenAI from 'openai';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { startServe, type Headless } from './headless';
import { findJargon } from './jargon';
import { goTo, openDashboard } from './ui';

/** The page's text as a user reads it: technical names behind their toggle are left out. */
async function readableText(page: Page): Promise<string> {
  // A string, evaluated in the page (this file is typed without the DOM's types).
  return page.evaluate<string>(`(() => {
    const hidden = [...document.querySelectorAll('main [data-tech-name]')];
    for (const n of hidden) n.style.display = 'none';
    const text = document.querySelector('main').innerText;
    for (const n of hidden) n.style.display = '';
    return text;
  })()`);
}

async function ask(client: OpenAI, model: string): Promise<{ status: number; id: string }> {
  try {
    const { response } = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    return { status: response.status, id: response.headers.get('x-switchyard-request-id') ?? '' };
  } catch (err) {
    if (err instanceof OpenAI.APIError && err.status !== undefined) return { status: err.status, id: err.headers?.get('x-switchyard-request-id') ?? '' };
    throw err;
  }
}

async function pausedQueue(app: Headless, connectionId: string): Promise<void> {
  await expect
    .poll(async () => (await app.api<{ connectionId: string; pausedUntil: number | null }[]>('GET', '/api/rate-limits')).find((v) => v.connectionId === connectionId)?.pausedUntil ?? null)
    .not.toBeNull();
}

test('the request log shows requested → served model, key, request id and waits with their reasons; search, status and time filters work', async ({ page, fake }, info) => {
  // One answer per attempt: the queue's reaction to the 429 is what the next request meets.
  const app = await startServe({ SWITCHYARD_SAME_TARGET_RETRIES: '0', SWITCHYARD_PLAIN_MODEL_COOLDOWN_WAIT: 'false' });
  try {
    const conn = await app.api<{ id: string }>('POST', '/api/providers', {
      name: 'Acme main',
      kind: 'openai-compatible',
      provider: 'acme',
      baseUrl: fake.openaiUrl,
      secret: 'sk-acme-xxxxxxxxxxxx',
      authClass: 'apikey',
      disableCooling: true,
    });
    await app.api('POST', '/api/agent-routes', { pattern: 'team-alias-*', connectionId: conn.id, model: 'acme-large' });
    const { secret } = await app.api<{ secret: string }>('POST', '/api/keys', { name: 'Build robot' });
    const client = new OpenAI({ baseURL: `${app.proxyUrl}/v1`, apiKey: secret, maxRetries: 0 });

    fake.script({ model: 'trigger' }, [
      { status: 429, headers: { 'retry-after-ms': '1200', 'x-ratelimit-remaining': '0' }, json: { error: { type: 'rate_limit_error', message: 'slow down' } } },
    ]);
    const trigger = await ask(client, 'trigger');
    expect(trigger.status).toBe(429);
    await pausedQueue(app, conn.id);
    const waited = await ask(client, 'work');
    expect(waited.status).toBe(200);
    const mapped = await ask(client, 'team-alias-7');
    expect(mapped.status).toBe(200);
    // A combo whose only connection is switched off: no one serves it.
    const spare = await app.api<{ id: string }>('POST', '/api/providers', { name: 'Spare', kind: 'openai-compatible', provider: 'spare', baseUrl: fake.openaiUrl, secret: 'sk-spare-xxxxxxxxxxx' });
    await app.api('POST', '/api/combos', { name: 'ghost-pool', targets: [{ provider: 'spare', model: 'nothing' }] });
    await app.api('PATCH', `/api/providers/${spare.id}`, { enabled: false });
    const unserved = await ask(client, 'ghost-pool');
    expect(unserved.status).toBeGreaterThanOrEqual(400);

    await openDashboard(page, app);
    await goTo(page, 'Request log');
    const rows = page.getByTestId('log-row');
    await expect(rows).toHaveCount(4);

    // The columns: requested → served model, the key's name, the id the agent received.
    const mappedRow = rows.filter({ hasText: 'team-alias-7' });
    await expect(mappedRow.getByTestId('log-model')).toContainText(/team-alias-7\s*→\s*acme-large/);
    await expect(mappedRow.getByTestId('log-key')).toHaveText('Build robot');
    await expect(mappedRow.getByTestId('log-request-id')).toHaveText(mapped.id);
    await expect(mappedRow.getByTestId('log-served-by')).toContainText('Acme main');
    await expect(page.getByRole('columnheader', { name: 'Client key' })).toBeVisible();
    await expect(page.getByRole('columnheader', { name: 'Request id' })).toBeVisible();
    // No one served it: the reason in plain words, the code one click away.
    const unservedBy = rows.filter({ hasText: unserved.id }).getByTestId('log-served-by');
    await expect(unservedBy).not.toHaveText(/_/);
    await expect(unservedBy).toHaveText(/[a-z]{3,}/);
    await unservedBy.getByRole('button', { name: 'Show the technical name' }).click();
    await expect(unservedBy.locator('[data-tech-name]')).toHaveText(/\S/);

    // The wait and its reason: on the row, and in full in its details.
    const waitedRow = rows.filter({ hasText: waited.id });
    await expect(waitedRow.getByTestId('log-wait-summary')).toContainText('upstream asked to pause');
    await waitedRow.getByRole('button', { name: /Details of the/ }).click();
    await expect(page.getByTestId('log-wait')).toContainText(/Waited .+: the upstream asked to pause requests to Acme main until \d\d:\d\d:\d\d \(its retry hint\)/);
    await page.screenshot({ path: info.outputPath('request-log-waits.png'), fullPage: true });
    // What the page says is plain: no internal codes, setting keys or requirement ids.
    expect(findJargon(await readableText(page))).toEqual([]);

    // Search by the request id finds exactly that row; by text, the rows that mention it.
    const search = page.getByRole('searchbox', { name: 'Search' });
    await search.fill(mapped.id);
    await expect(rows).toHaveCount(1);
    await expect(rows.first().getByTestId('log-request-id')).toHaveText(mapped.id);
    await search.fill('TEAM-ALIAS');
    await expect(rows).toHaveCount(1);
    await search.fill('');
    await expect(rows).toHaveCount(4);

    // Status filter.
    const status = page.getByRole('combobox', { name: 'Status' });
    await status.selectOption({ label: 'Rate limited' });
    await expect(rows).toHaveCount(1);
    await expect(rows.first().getByTestId('log-request-id')).toHaveText(trigger.id);
    await status.selectOption({ label: 'Succeeded' });
    await expect(rows).toHaveCount(2);
    await status.selectOption({ label: 'Failed (any error)' });
    await expect(rows).toHaveCount(2);
    await status.selectOption({ label: 'Every status' });
    await expect(rows).toHaveCount(4);

    // Time range: the last 15 minutes hold every row; a range starting in the future holds none;
    // a range that ends before it starts is refused with a plain message.
    const time = page.getByRole('combobox', { name: 'Time' });
    await time.selectOption({ label: 'Last 15 minutes' });
    await expect(rows).toHaveCount(4);
    await time.selectOption({ label: 'Custom range' });
    const local = (at: number) => {
      const d = new Date(at);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
    };
    await page.getByLabel('From', { exact: true }).fill(local(Date.now() + 3_600_000));
    await expect(page.getByText('No request matches')).toBeVisible();
    await page.getByLabel('From', { exact: true }).fill(local(Date.now() - 3_600_000));
    await expect(rows).toHaveCount(4);
    await page.getByLabel('To', { exact: true }).fill(local(Date.now() - 7_200_000));
    await expect(page.getByRole('alert').filter({ hasText: 'The start of the range is after its end.' })).toBeVisible();
    await expect(rows).toHaveCount(4);
    expect(findJargon(await readableText(page))).toEqual([]);
  } finally {
    await app.stop();
  }
});
