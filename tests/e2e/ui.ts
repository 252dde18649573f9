// Steps shared by the dashboard specs: open the dashboard with the token link, go to a page, add
// a connection through the form, and send a request through the proxy with the real Anthropic SDK.
import Anthropic from '@anthropic-ai/sdk';
import { expect, type Page } from '@playwright/test';
import type { Headless } from './headless';

export type PageName =
  | 'Overview'
  | 'Connect your agent'
  | 'Connections'
  | 'Combos'
  | 'Cooldown manager'
  | 'Provider breakers'
  | 'Error rules'
  | 'Resilience settings'
  | 'Prices'
  | 'Request log'
  | 'Sessions'
  | 'Leases'
  | 'Team'
  | 'App & token';

export async function openDashboard(page: Page, app: Headless): Promise<void> {
  await page.goto(`${app.managementUrl}/?token=${app.token}`);
  await expect(page.getByTestId('health-status')).toHaveText(/ok|degraded/);
  await expect(page.getByTestId('link-status')).toHaveText('Live');
}

export async function goTo(page: Page, name: PageName): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
}

export interface NewConnection {
  kind?: string;
  name: string;
  baseUrl: string;
  apiKey: string;
  provider?: string;
  priority?: number;
}

/** Adds a connection through the "Add connection" form and waits for its card. */
export async function addConnection(page: Page, c: NewConnection): Promise<void> {
  await page.getByRole('button', { name: 'Add connection' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Add connection' });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('combobox', { name: 'Kind', exact: true }).selectOption({ label: c.kind ?? 'Anthropic API key' });
  await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill(c.name);
  if (c.provider) await dialog.getByRole('textbox', { name: 'Provider', exact: true }).fill(c.provider);
  await dialog.getByRole('textbox', { name: 'Base URL', exact: true }).fill(c.baseUrl);
  await dialog.getByRole('textbox', { name: 'API key', exact: true }).fill(c.apiKey);
  if (c.priority !== undefined) await dialog.getByRole('textbox', { name: 'Priority', exact: true }).fill(String(c.priority));
  await dialog.getByRole('button', { name: 'Add connection' }).click();
  await expect(dialog).toBeHidden();
  await expect(connectionCard(page, c.name)).toBeVisible();
}

export const connectionCard = (page: Page, name: string) => page.getByRole('article', { name, exact: true });

/** The proxy's default client key, read through the management API. */
export async function clientKey(app: Headless): Promise<string> {
  const keys = await app.api<{ id: string; revokedAt: number | null }[]>('GET', '/api/keys');
  const key = keys.find((k) => k.revokedAt === null);
  if (!key) throw new Error('no active client key');
  return (await app.api<{ secret: string }>('POST', `/api/keys/${key.id}/reveal`)).secret;
}

/** One Anthropic Messages call through the proxy; returns the HTTP status. */
export async function sendMessage(app: Headless, key: string, model = 'claude-e2e'): Promise<number> {
  const client = new Anthropic({ baseURL: app.proxyUrl, apiKey: key, maxRetries: 0 });
  try {
    await client.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'ping' }] });
    return 200;
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (typeof status === 'number') return status;
    throw err;
  }
}
