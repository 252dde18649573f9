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
    'Sign-in page',
    'Where "Sign in with Claude" sends the browser.',
    'https://claude.ai/oauth/authorize',
  ),
  'claude.tokenUrl': url(
    'Token address',
    'Where the sign-in code is exchanged for tokens, and tokens are refreshed.',
    'https://console.anthropic.com/v1/oauth/token',
  ),
  'claude.pasteRedirectUri': url(
    'Return address for pasted codes',
    'The page the sign-in returns to when you copy the code from the provider\'s page instead of letting the app receive it.',
    'https://console.anthropic.com/oauth/code/callback',
  ),
  'claude.apiBaseUrl': json<string>({
    group: 'claude',
    label: 'Account address',
    description:
      'Where usage, profile and limit-reset calls go. Empty: the connection\'s own base URL (https://api.anthropic.com for a Claude subscription).',
    default: '',
    schema: z.union([z.literal(''), httpUrl]),
    shape: 'an http(s) URL string, or "" for the connection\'s base URL',
  }),
  'claude.clientId': json<string>({
    group: 'claude',
    label: 'Sign-in client id',
    description: 'The public client the sign-in presents itself as (Claude Code\'s by default).',
    default: CLAUDE_CODE_CLIENT_ID,
    schema: z.string().trim().min(1, 'must not be empty').max(200),
    shape: 'a client id string',
  }),
  'claude.scopes': json<string>({
    group: 'claude',
    label: 'Permissions asked at sign-in',
    description: 'The permissions (scopes) asked for at sign-in, separated by spaces.',
    default: 'org:create_api_key user:profile user:inference',
    schema: z.string().trim().min(1, 'must not be empty').max(1_000),
    shape: 'space-separated scopes',
  }),
  'claude.refreshMarginMs': int({
    group: 'claude',
    label: 'Refresh a token this long before it expires',
    description: 'A sign-in token this close to its expiry is refreshed before the request is sent.',
    default: 5 * MIN,
    min: 0,
    max: 60 * MIN,
    unit: 'ms',
  }),
};
