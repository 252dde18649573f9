// "Test connection" and "Test combo" on a Google AI Studio (Gemini) connection: Google's model list
// read into the ids a request names, Google's error bodies into the tester's outcome words, and a
// combo whose first target speaks Gemini tested with a Gemini request.
import { describe, expect, it } from 'vitest';
import { describeGeminiFailure, geminiModelPage } from '../../../src/main/engine/management/geminiModelList';
import { comboTestRequest } from '../../../src/main/engine/management/comboTester';
import { geminiError } from '../../support/fakeUpstream';

describe("Google's model list", () => {
  it('keeps the models that generate content, without the models/ prefix, and the next page', () => {
    const page = geminiModelPage(
      JSON.stringify({
        models: [
          { name: 'models/gemini-2.5-pro', supportedGenerationMethods: ['generateContent', 'countTokens'] },
          { name: 'models/text-embedding-004', supportedGenerationMethods: ['embedContent'] },
          { name: 'models/gemini-2.5-flash' },
          { name: 42 },
          null,
        ],
        nextPageToken: 'next-1',
      }),
    );
    expect(page).toEqual({ models: ['gemini-2.5-pro', 'gemini-2.5-flash'], nextPageToken: 'next-1' });
  });

  it('reads nothing from a body that is not a model list', () => {
    expect(geminiModelPage('<html>')).toEqual({ models: [], nextPageToken: null });
    expect(geminiModelPage('{"data":[{"id":"gpt-4o"}]}')).toEqual({ models: [], nextPageToken: null });
    expect(geminiModelPage('{"models":[],"nextPageToken":""}')).toEqual({ models: [], nextPageToken: null });
  });
});

describe("Google's errors in the tester's words", () => {
  const withReason = (status: number, word: string, message: string, reason: string) =>
    JSON.stringify({ error: { code: status, status: word, message, details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason }] } });

  it('a refused key is refused, whatever status Google gives it', () => {
    expect(describeGeminiFailure(400, withReason(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'))).toEqual({
      what: 'the upstream rejected the credentials',
      message: 'API key not valid. Please pass a valid API key.',
    });
    expect(describeGeminiFailure(400, JSON.stringify(geminiError(400, 'INVALID_ARGUMENT', 'API key expired. Please renew the API key.'))).what).toBe('the upstream rejected the credentials');
    expect(describeGeminiFailure(403, JSON.stringify(geminiError(403, 'PERMISSION_DENIED', 'Method doesn\'t allow unregistered callers.'))).what).toBe('the upstream rejected the credentials');
  });

  it('a quota is a rate limit, a missing list a wrong address, anything else its status', () => {
    expect(describeGeminiFailure(429, JSON.stringify(geminiError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', '30s')))).toEqual({ what: 'the upstream is rate-limiting this key', message: 'Quota exceeded.' });
    expect(describeGeminiFailure(404, JSON.stringify(geminiError(404, 'NOT_FOUND', 'Not found.'))).what).toBe('the upstream has no model list at this URL (check the base URL)');
    expect(describeGeminiFailure(400, JSON.stringify(geminiError(400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.')))).toEqual({
      what: 'the upstream answered 400',
      message: 'User location is not supported for the API use.',
    });
    // A body that is not Google's: its text is the message; an empty one adds nothing.
    expect(describeGeminiFailure(502, 'Bad gateway')).toEqual({ what: 'the upstream answered 502', message: 'Bad gateway' });
    expect(describeGeminiFailure(503, '')).toEqual({ what: 'the upstream answered 503', message: '' });
  });
});

describe('the combo test request', () => {
  it('is a Gemini generateContent for a Gemini target, the combo named in the path and the key in Google\'s header', () => {
    const r = comboTestRequest('gemini', 'team/fast:v2', 'sk-sy-client');
    expect(r.path).toBe('/v1beta/models/team%2Ffast%3Av2:generateContent');
    expect(r.headers).toEqual({ 'content-type': 'application/json', 'x-goog-api-key': 'sk-sy-client' });
    expect(r.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Reply with the word OK.' }] }], generationConfig: { maxOutputTokens: 16 } });
  });

  it('stays Anthropic Messages and Chat Completions for the other two', () => {
    expect(comboTestRequest('anthropic', 'c', 'k')).toMatchObject({ path: '/v1/messages', headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' }, body: { model: 'c' } });
    expect(comboTestRequest('openai', 'c', 'k')).toMatchObject({ path: '/v1/chat/completions', headers: { authorization: 'Bearer k' }, body: { model: 'c' } });
  });
});
