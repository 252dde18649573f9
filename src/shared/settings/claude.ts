// Claude subscription accounts (SPEC §2b, issue 13): the OAuth endpoints, the public client id and
// the token refresh margin. Every endpoint is a setting so tests (and a self-hosted relay) can point
// them elsewhere. URLs are stored as JSON strings (the settings schema has no plain text type).
import { z } from 'zod';
import { int, json } from './define';

const MIN = 60_000;

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2_000);

const url = (label: string, description: string, def: string) =>
  json<string>({
    group: 'claude',
    label,
    description,
    default: def,
    schema: httpUrl,
    shape: `an http(s) URL string, e.g. "${def}"`,
  });

/** The public OAuth client of Claude Code (a public PKCE client: there is no client secret). */
export const CLAUDE_CODE_CLIENT_ID = '9d1c250a-e61b-44d9-88ed-5944d1962f5e';

export const claudeSettings = {
  'claude.authorizeUrl': url(
    'Sign-in page (authorize URL)',
    'Where "Sign in with Claude" sends the browser (OAuth 2.0 authorization code with PKCE).',
    'https://claude.ai/oauth/authorize',
  ),
  'claude.tokenUrl': url(
    'Token endpoint',
    'Exchanges the sign-in code for tokens and refreshes them.',
    'https://console.anthropic.com/v1/oauth/token',
  ),
  'claude.pasteRedirectUri': url(
    'Redirect for pasted codes',
    'Redirect URI used when the code is copied from the provider\'s page ("code#state") instead of a loopback callback.',
    'https://console.anthropic.com/oauth/code/callback',
  ),
  'claude.apiBaseUrl': json<string>({
    group: 'claude',
    label: 'Account API base URL',
    description:
      'Origin of the usage, profile and limit-reset calls. Empty: the connection\'s own base URL (https://api.anthropic.com for a Claude subscription).',
    default: '',
    schema: z.union([z.literal(''), httpUrl]),
    shape: 'an http(s) URL string, or "" for the connection\'s base URL',
  }),
  'claude.clientId': json<string>({
    group: 'claude',
    label: 'OAuth client id',
    description: 'The public OAuth client the sign-in uses (Claude Code\'s by default).',
    default: CLAUDE_CODE_CLIENT_ID,
    schema: z.string().trim().min(1, 'must not be empty').max(200),
    shape: 'a client id string',
  }),
  'claude.scopes': json<string>({
    group: 'claude',
    label: 'OAuth scopes',
    description: 'Space-separated scopes requested at sign-in.',
    default: 'org:create_api_key user:profile user:inference',
    schema: z.string().trim().min(1, 'must not be empty').max(1_000),
    shape: 'space-separated scopes',
  }),
  'claude.refreshMarginMs': int({
    group: 'claude',
    label: 'Refresh before expiry',
    description: 'An access token this close to its expiry is refreshed before the request is sent.',
    default: 5 * MIN,
    min: 0,
    max: 60 * MIN,
    unit: 'ms',
  }),
};
