// The jargon checker the plain-words Playwright test runs over every page (tests/e2e/jargon.ts):
// every example of words from inside the code that issue 22 found on the dashboard is caught, and
// the plain sentences that replace them, names users type and file names pass.
import { describe, expect, it } from 'vitest';
import { findJargon } from '../../e2e/jargon';

const words = (text: string) => findJargon(text).map((h) => h.text);

describe('findJargon', () => {
  it.each([
    ['Sticky routing follows R-TW-10 here.', 'R-TW-10'],
    ['Failed with RATE_LIMIT_QUEUE_FULL', 'RATE_LIMIT_QUEUE_FULL'],
    ['the wait ended in RATE_LIMIT_QUEUE_TIMEOUT.', 'RATE_LIMIT_QUEUE_TIMEOUT'],
    ['or fails with SEMAPHORE_TIMEOUT. Empty: no cap.', 'SEMAPHORE_TIMEOUT'],
    ['SEMAPHORE_QUEUE_FULL', 'SEMAPHORE_QUEUE_FULL'],
    ['the breaker is HALF_OPEN', 'HALF_OPEN'],
    ['bounded by requestQueue.maxWaitMs', 'requestQueue.maxWaitMs'],
    ['see providerBreaker.apikey.failureThreshold', 'providerBreaker.apikey.failureThreshold'],
    ["accept Anthropic's slow lane (lowPriorityMode).", '(lowPriorityMode)'],
    ['ran past its execution budget ( executionMaxWaitMs )', '( executionMaxWaitMs )'],
    ['stored in providerSpecificData', 'providerSpecificData'],
    ['model-g  Gamma  quota family  14m 56s', 'quota family'],
    ['429 all_targets_cooling_down', 'all_targets_cooling_down'],
    ['Reason rate_limit_exceeded', 'rate_limit_exceeded'],
    ['Cooldowns per model (a known gap)', 'a known gap'],
    ['Execution shapes (not available yet)', 'not available yet'],
    ['env SWITCHYARD_PROXY_PORT', 'SWITCHYARD_PROXY_PORT'],
  ])('catches %j', (text, hit) => {
    expect(words(text)).toEqual([hit]);
  });

  it('says which rule matched and where', () => {
    expect(findJargon('Paused: RATE_LIMIT_QUEUE_FULL')).toEqual([{ rule: 'internal code (UPPER_SNAKE)', text: 'RATE_LIMIT_QUEUE_FULL', index: 8 }]);
  });

  it('lets plain sentences through', () => {
    const plain = [
      'Paused after a rate limit — resumes at 14:02',
      'Every connection for this model is cooling down',
      'Rate-limit queue full',
      'Model locked · 14m 56s. Only this model on Gamma; its other models keep serving.',
      'Breaker open: the provider is skipped until 14:35, then one test request goes through.',
      'Claude Code native · Codex CLI via Chat (its listed models or delta/<model>)',
      'Last request 13:35:13: 429, every target of the combo is rate limited; retry in 15 min',
      'Round-robin, Power of two choices, Cheapest first',
      'Used with OpenRouter, DeepSeek, xAI, LM Studio, vLLM, llama.cpp and gpt-4o-mini.',
      'e.g. sonnet · 4.5 s · 1.2 KiB · http://127.0.0.1:8787/v1',
    ].join('\n');
    expect(findJargon(plain)).toEqual([]);
  });

  it('lets through the agents’ own environment variables and file names a user opens', () => {
    expect(words('Claude Code reads ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN; Codex reads OPENAI_API_KEY.')).toEqual([]);
    expect(words('Written to claude_desktop_config.json and ~/.codex/config.toml')).toEqual([]);
  });

  it('lets through paths and URLs, whatever their random parts look like', () => {
    expect(words('Data folder /tmp/switchyard-e2e-oPgJbi Copy')).toEqual([]);
    expect(words('Management API http://127.0.0.1:44801/api/fooBarBaz')).toEqual([]);
    // The same word outside a path is still caught.
    expect(words('Data folder switchyard-e2e-oPgJbiQx')).toEqual(['oPgJbiQx']);
  });

  it('lets through a masked key’s random tail, and still catches a code after a truncated text', () => {
    expect(words('Key for the snippets Default (sk-sy-…Y3_C) Worker (sk-sy-…16MH)')).toEqual([]);
    expect(words('ANTHROPIC_AUTH_TOKEN="sk-sy-…-A_B" and sk-ant-…ab_cd')).toEqual([]);
    expect(words('the last request failed… RATE_LIMIT_EXCEEDED')).toEqual(['RATE_LIMIT_EXCEEDED']);
    expect(words('sk-sy-…Y3_C RATE_LIMIT_EXCEEDED')).toEqual(['RATE_LIMIT_EXCEEDED']);
  });

  it('reports a field name in parentheses once, not also as a bare field name', () => {
    expect(findJargon('(autoLimitReset)')).toHaveLength(1);
  });
});
