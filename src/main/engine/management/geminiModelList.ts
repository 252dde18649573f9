// What "Test connection" reads from a Google AI Studio (Gemini) upstream: the model list of
// `GET /v1beta/models` (`{ models: [{ name: 'models/gemini-2.5-pro', supportedGenerationMethods }],
// nextPageToken }`) as the ids a request names, and Google's error body
// (`{ error: { code, status, message, details } }`) as the tester's outcome words.
import { readGeminiError } from '../codecs/geminiErrors';

export interface GeminiModelPage {
  /** Model ids without the `models/` prefix, only those that answer generateContent. */
  models: string[];
  /** Where the next page starts, when Google has more. */
  nextPageToken: string | null;
}

/** One page of Google's model list. A model that says which methods it supports must list generateContent. */
export function geminiModelPage(text: string): GeminiModelPage {
  let j: { models?: unknown; nextPageToken?: unknown };
  try {
    j = JSON.parse(text) as typeof j;
  } catch {
    return { models: [], nextPageToken: null };
  }
  const list = Array.isArray(j?.models) ? (j.models as Record<string, unknown>[]) : [];
  const models: string[] = [];
  for (const m of list) {
    if (!m || typeof m !== 'object' || typeof m.name !== 'string') continue;
    const methods = m.supportedGenerationMethods;
    // Embedding, token-counting-only and other models cannot serve a chat request.
    if (Array.isArray(methods) && !methods.includes('generateContent')) continue;
    const id = m.name.replace(/^models\//, '');
    if (id) models.push(id);
  }
  const next = typeof j.nextPageToken === 'string' && j.nextPageToken ? j.nextPageToken : null;
  return { models, nextPageToken: next };
}

/** Google's ErrorInfo reasons that mean the key itself was refused. */
const KEY_REFUSED = new Set(['API_KEY_INVALID', 'API_KEY_SERVICE_BLOCKED', 'API_KEY_HTTP_REFERRER_BLOCKED', 'API_KEY_IP_ADDRESS_BLOCKED']);

/**
 * The outcome of a refused Gemini model list, in the tester's words, and Google's own message.
 * A refused key comes as 400 INVALID_ARGUMENT with the reason API_KEY_INVALID, so the status alone
 * would not say it; a 403 PERMISSION_DENIED is a key without access; a 429 RESOURCE_EXHAUSTED a quota.
 */
export function describeGeminiFailure(status: number, body: string): { what: string; message: string } {
  const e = readGeminiError(status, body);
  const keyRefused =
    (e.code !== null && KEY_REFUSED.has(e.code)) ||
    /api key not valid|api key expired|invalid api key/i.test(e.message) ||
    e.type === 'UNAUTHENTICATED' ||
    e.type === 'PERMISSION_DENIED' ||
    status === 401 ||
    status === 403;
  const what = keyRefused
    ? 'the upstream rejected the credentials'
    : status === 404 || e.type === 'NOT_FOUND'
      ? 'the upstream has no model list at this URL (check the base URL)'
      : status === 429 || e.type === 'RESOURCE_EXHAUSTED'
        ? 'the upstream is rate-limiting this key'
        : `the upstream answered ${status}`;
  const own = e.message === `upstream answered ${status}` ? '' : e.message;
  return { what, message: own };
}
