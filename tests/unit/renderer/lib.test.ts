// The renderer's pure helpers: live connection state with lazy expiry, what the Cooldown manager
// lists, the connection form's checks and inputs, setting input parsing, countdown text and the
// agent setup snippets.
import { describe, expect, it } from 'vitest';
import { agentGuides } from '../../../src/renderer/lib/agentSetup';
import { activeLockouts, breakerStateAt, liveStateOf, outOfRouting } from '../../../src/renderer/lib/connectionState';
import { buildCreateInput, buildUpdateInput, claudeSecret, emptyForm, errorFor, formFromConnection, hasClaudeOptions, parseModels } from '../../../src/renderer/lib/connectionForm';
import { describeError, messageForField } from '../../../src/renderer/lib/errors';
import { formatDuration, formatRemaining } from '../../../src/renderer/lib/format';
import { describeErrorType } from '../../../src/renderer/lib/reasons';
import { checkSettingValue, parseSettingText } from '../../../src/renderer/lib/settingInput';
import { BridgeError } from '../../../src/shared/bridge';
import type { BreakerView } from '../../../src/shared/model';
import { connection, cooldownEntry, lockout, settingsView } from './builders';

describe('live connection state', () => {
  const cooling = cooldownEntry({ status: 'cooling', rateLimitedUntil: 1_060_000, lastErrorType: 'rate_limit_exceeded', errorCode: '429', backoffLevel: 2 });

  it('a cooldown shows the time left and the reason', () => {
    expect(liveStateOf(connection(), cooling, 1_000_000)).toEqual({
      kind: 'cooling',
      until: 1_060_000,
      remainingMs: 60_000,
      reason: 'rate_limit_exceeded',
      detail: null,
      errorCode: '429',
      backoffLevel: 2,
    });
  });

  it('a cooldown whose end has passed is healthy again without a push', () => {
    expect(liveStateOf(connection(), cooling, 1_060_000).kind).toBe('healthy');
  });

  it('a terminal state wins over everything and is never read as a cooldown', () => {
    const banned = cooldownEntry({ status: 'banned', terminal: true, rateLimitedUntil: 2_000_000, lastErrorType: 'banned' });
    expect(liveStateOf(connection({ enabled: false }), banned, 1_000_000)).toMatchObject({ kind: 'terminal', status: 'banned' });
  });

  it('without a cooldown entry, the connection row health is used', () => {
    const c = connection({ health: { ...connection().health, testStatus: 'credits_exhausted', lastError: 'no credits' } });
    expect(liveStateOf(c, undefined, 0)).toMatchObject({ kind: 'terminal', status: 'credits_exhausted', detail: 'no credits' });
    expect(liveStateOf(connection({ enabled: false }), undefined, 0).kind).toBe('disabled');
  });

  it('an OPEN breaker past its probe time reads HALF_OPEN', () => {
    const b = { state: 'OPEN', halfOpenAt: 5_000 } as BreakerView;
    expect(breakerStateAt(b, 4_999)).toBe('OPEN');
    expect(breakerStateAt(b, 5_000)).toBe('HALF_OPEN');
  });

  it('the Cooldown manager lists live cooldowns soonest first, terminal states, and live lockouts', () => {
    const out = outOfRouting(
      [
        cooldownEntry({ connectionId: 'a', status: 'cooling', rateLimitedUntil: 1_090_000 }),
        cooldownEntry({ connectionId: 'b', status: 'cooling', rateLimitedUntil: 1_030_000 }),
        cooldownEntry({ connectionId: 'c', status: 'cooling', rateLimitedUntil: 999_000 }),
        cooldownEntry({ connectionId: 'd', status: 'expired', terminal: true }),
        cooldownEntry({ connectionId: 'e' }),
      ],
      [lockout({ expiresAt: 1_500_000 }), lockout({ model: 'gone', expiresAt: 900_000 })],
      1_000_000,
    );
    expect(out.cooling.map((c) => [c.connectionId, c.remainingMs])).toEqual([
      ['b', 30_000],
      ['a', 90_000],
    ]);
    expect(out.terminal.map((t) => t.connectionId)).toEqual(['d']);
    expect(out.lockouts.map((l) => l.model)).toEqual(['claude-x']);
    expect(activeLockouts([lockout({ expiresAt: 10 })], 10)).toEqual([]);
  });
});

describe('connection form', () => {
  it('names every missing required field for the chosen kind', () => {
    const r = buildCreateInput(emptyForm('openai-compatible'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(Object.keys(r.errors).sort()).toEqual(['baseUrl', 'name', 'provider']);
    const anthropic = buildCreateInput({ ...emptyForm('anthropic'), name: 'A' });
    expect(anthropic.ok ? {} : anthropic.errors).toEqual({ secret: 'an API key is required for this kind' });
  });

  it('checks numbers against the contract ranges', () => {
    const r = buildCreateInput({ ...emptyForm('local'), name: 'L', maxConcurrent: '0', priority: '1.5', idleMs: '10' });
    expect(r.ok ? {} : r.errors).toEqual({
      maxConcurrent: 'must be between 1 and 100,000',
      priority: 'must be a whole number',
      'timeouts.idleMs': 'must be between 1,000 and 3,600,000',
    });
  });

  it('builds a create input with caps, protection and the Claude options', () => {
    const r = buildCreateInput({
      ...emptyForm('claude-subscription'),
      name: ' Work ',
      secret: 'sk-ant-oat01-token',
      maxConcurrent: '2',
      modelConcurrency: [
        { model: 'claude-a', cap: '1' },
        { model: '', cap: '' },
      ],
      protectionMode: 'on',
      lowPriorityMode: true,
    });
    expect(r.ok && r.input).toMatchObject({
      name: 'Work',
      kind: 'claude-subscription',
      authClass: 'oauth',
      secret: 'sk-ant-oat01-token',
      maxConcurrent: 2,
      rateLimitOverrides: { modelConcurrency: { 'claude-a': 1 } },
      rateLimitProtectionMode: 'on',
      providerSpecificData: { lowPriorityMode: true, autoLimitReset: false },
    });
  });

  it('the Claude options belong to Claude subscriptions only; an API-key connection sends none', () => {
    expect(hasClaudeOptions('claude-subscription')).toBe(true);
    expect(hasClaudeOptions('anthropic')).toBe(false);
    const r = buildCreateInput({ ...emptyForm('anthropic'), name: 'Key', secret: 'sk-ant-key', lowPriorityMode: true });
    expect(r.ok && r.input.providerSpecificData).toEqual({});
  });

  it('pasted Claude tokens: a bare token as is, with refresh token or expiry as one JSON object, Claude Code\'s JSON untouched', () => {
    const f = { secret: ' at-123456789 ', claudeRefreshToken: '', claudeExpiresAt: '' };
    expect(claudeSecret(f)).toBe('at-123456789');
    expect(JSON.parse(claudeSecret({ ...f, claudeRefreshToken: 'rt-1', claudeExpiresAt: '1796392800000' }))).toEqual({
      accessToken: 'at-123456789',
      refreshToken: 'rt-1',
      expiresAt: 1796392800000,
    });
    expect(JSON.parse(claudeSecret({ ...f, claudeExpiresAt: '2026-12-31T00:00:00Z' }))).toEqual({ accessToken: 'at-123456789', expiresAt: '2026-12-31T00:00:00Z' });
    const file = '{"claudeAiOauth":{"accessToken":"x"}}';
    expect(claudeSecret({ ...f, secret: file, claudeRefreshToken: 'ignored' })).toBe(file);
    const missing = buildCreateInput({ ...emptyForm('claude-subscription'), name: 'C' });
    expect(missing.ok ? {} : missing.errors).toEqual({ secret: "paste the access token (or Claude Code's credentials JSON), or sign in instead" });
  });

  it('a model listed twice in the caps is refused on its row', () => {
    const r = buildCreateInput({
      ...emptyForm('local'),
      name: 'L',
      modelConcurrency: [
        { model: 'm', cap: '1' },
        { model: 'm', cap: '2' },
      ],
    });
    expect(r.ok ? {} : r.errors).toEqual({ 'rateLimitOverrides.modelConcurrency.1': 'm is listed twice' });
  });

  it('an edit keeps the saved secret unless a new one is typed, and keeps other providerSpecificData', () => {
    const c = connection({ kind: 'claude-subscription', authClass: 'oauth', providerSpecificData: { organizationUUID: 'org', custom: 1 }, maxConcurrent: 3 });
    const form = formFromConnection(c);
    expect(form.maxConcurrent).toBe('3');
    const r = buildUpdateInput({ ...form, autoLimitReset: true }, c);
    expect(r.ok && r.input.secret).toBeUndefined();
    expect(r.ok && r.input.providerSpecificData).toEqual({ organizationUUID: 'org', custom: 1, autoLimitReset: true });
    const withKey = buildUpdateInput({ ...form, secret: 'new' }, c);
    expect(withKey.ok && withKey.input.secret).toBe('new');
  });

  it('turning passthrough off needs a model list', () => {
    const r = buildCreateInput({ ...emptyForm('local'), name: 'L', passthroughModels: false });
    expect(r.ok ? {} : r.errors).toEqual({ models: 'list at least one model, or let the connection accept any model' });
    expect(parseModels('a, b\nb\n  \nc')).toEqual(['a', 'b', 'c']);
  });

  it('an engine error deeper inside a field is shown on that field', () => {
    expect(errorFor({ 'rateLimitOverrides.modelConcurrency.m': 'Too big' }, 'rateLimitOverrides.modelConcurrency')).toBe('Too big');
  });
});

describe('setting input', () => {
  const view = settingsView();
  const s = (k: string) => view.settings.find((x) => x.key === k)!;

  it('parses whole numbers, with separators, inside the range', () => {
    expect(parseSettingText(s('connectionCooldown.apikeyBaseMs'), '3_000')).toEqual({ ok: true, value: 3000 });
    expect(parseSettingText(s('connectionCooldown.apikeyBaseMs'), '')).toEqual({ ok: false, message: 'enter a number' });
  });

  it('an empty optional number means "none"', () => {
    expect(parseSettingText(s('rotation.rateLimitResetSeconds'), ' ')).toEqual({ ok: true, value: null });
  });

  it('a value the API would clamp is refused with the range instead', () => {
    const r = checkSettingValue('proxy.maxAttempts', 99);
    expect(r).toEqual({ ok: false, message: 'must be between 1 and 20' });
  });

  it('JSON settings are checked against their schema', () => {
    const r = parseSettingText(s('modelLockout.errorCodes'), '["x"]');
    expect(r.ok).toBe(false);
    expect(parseSettingText(s('modelLockout.errorCodes'), '[429, 503]')).toEqual({ ok: true, value: [429, 503] });
  });
});

describe('words', () => {
  it('countdowns', () => {
    expect(formatRemaining(59_001)).toBe('1m 00s');
    expect(formatRemaining(45_000)).toBe('45s');
    expect(formatRemaining(3_725_000)).toBe('1h 02m');
    expect(formatRemaining(-5)).toBe('0s');
    expect(formatDuration(90_000)).toBe('1.5 min');
    expect(formatDuration(86_400_000)).toBe('1 day');
  });

  it('reasons', () => {
    expect(describeErrorType('rate_limit_exceeded')).toBe('Rate limited');
    expect(describeErrorType('http_418')).toBe('HTTP 418');
    expect(describeErrorType('weird_new_reason')).toBe('Weird new reason');
  });

  it('errors keep the engine message and drop the field prefix next to the field', () => {
    const e = describeError(new BridgeError('invalid_input', 'priority: Too big: expected number to be <=1000', 'priority'));
    expect(messageForField(e)).toBe('Too big: expected number to be <=1000');
    expect(describeError(new TypeError('x is undefined')).message).toBe('x is undefined');
    expect(describeError('??').message).toBe('Something went wrong.');
  });
});

describe('agent setup', () => {
  const guides = agentGuides({ proxyUrl: 'http://127.0.0.1:8480/', key: 'sk-sy-k', openaiModel: 'gpt-x', anthropicModel: 'claude-x' });
  const code = (id: string) => guides.find((g) => g.id === id)!.snippets.map((s) => s.code).join('\n');

  it('Claude Code gets the origin and the key as an auth token', () => {
    expect(code('claude-code')).toContain('export ANTHROPIC_BASE_URL="http://127.0.0.1:8480"\nexport ANTHROPIC_AUTH_TOKEN="sk-sy-k"');
  });

  it('OpenAI-protocol tools get the /v1 base URL', () => {
    expect(code('codex')).toContain('base_url = "http://127.0.0.1:8480/v1"');
    expect(code('codex')).toContain('wire_api = "responses"');
    expect(code('aider')).toContain('OPENAI_API_BASE="http://127.0.0.1:8480/v1"');
    expect(code('aider')).toContain('--model openai/gpt-x');
    expect(code('openai-sdk')).toContain('base_url="http://127.0.0.1:8480/v1", api_key="sk-sy-k"');
  });

  it('opencode, qwen-code and Crush get files in their own configuration format', () => {
    const file = (id: string, where: string) => JSON.parse(guides.find((g) => g.id === id)!.snippets.find((x) => x.where === where)!.code);
    expect(file('opencode', '~/.config/opencode/opencode.json')).toMatchObject({
      model: 'switchyard/gpt-x',
      provider: { switchyard: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://127.0.0.1:8480/v1', apiKey: 'sk-sy-k' }, models: { 'gpt-x': {} } } },
    });
    const qwen = file('qwen-code', '~/.qwen/settings.json');
    expect(qwen.modelProviders.openai[0]).toMatchObject({ id: 'gpt-x', baseUrl: 'http://127.0.0.1:8480/v1', envKey: 'SWITCHYARD_API_KEY' });
    // Its only session id towards a gateway: the header placeholder, which needs the switch.
    expect(qwen.modelProviders.openai[0].generationConfig.customHeaders['X-Session-Id']).toBe('$' + '{session_id}');
    expect(qwen.outboundCorrelation).toEqual({ allowDynamicHeaderValues: true });
    expect(code('qwen-code')).toContain('export SWITCHYARD_API_KEY="sk-sy-k"');
    expect(file('crush', '~/.config/crush/crush.json').providers.switchyard).toMatchObject({ type: 'openai-compat', base_url: 'http://127.0.0.1:8480/v1', api_key: 'sk-sy-k' });
  });

  it('Gemini CLI gets the origin without a path, the key as its API key and an API key sign-in file', () => {
    expect(code('gemini-cli')).toContain('export GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:8480"\nexport GEMINI_API_KEY="sk-sy-k"\ngemini');
    const settings = JSON.parse(guides.find((g) => g.id === 'gemini-cli')!.snippets.find((x) => x.where === '~/.gemini/settings.json')!.code);
    expect(settings).toEqual({
      security: { auth: { selectedType: 'gemini-api-key' } },
      model: { name: 'gpt-x' },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    });
    const withGemini = agentGuides({ proxyUrl: 'http://127.0.0.1:8480', key: 'k', openaiModel: 'gpt-x', anthropicModel: 'claude-x', geminiModel: 'gemini-x' });
    expect(withGemini.find((g) => g.id === 'gemini-cli')!.snippets[0]!.code).toContain('"name": "gemini-x"');
  });

  it('Continue and Cline get the /v1 base URL, the key and the model', () => {
    expect(code('continue')).toContain('provider: openai\n    model: gpt-x\n    apiBase: http://127.0.0.1:8480/v1\n    apiKey: sk-sy-k');
    expect(code('cline')).toBe('API Provider: OpenAI Compatible\nBase URL: http://127.0.0.1:8480/v1\nAPI Key: sk-sy-k\nModel ID: gpt-x');
  });
});
