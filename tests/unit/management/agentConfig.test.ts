// The agent configuration writer behind "Apply" / "Restore" on the Connect your agent page,
// against a temporary HOME: merged into what is there, a backup of the file as it was, and a
// Restore that puts back exactly the keys Switchyard wrote and nothing else.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentConfigWriter } from '../../../src/main/engine/management/agentConfig';

const TARGET = { proxyUrl: 'http://127.0.0.1:8480', clientKey: 'sk-sy-test-key', model: 'my-model' };
let home: string;
let state: string;
let writer: AgentConfigWriter;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'sy-agent-home-'));
  state = mkdtempSync(join(tmpdir(), 'sy-agent-state-'));
  writer = new AgentConfigWriter({ home, stateDir: state, now: () => 1_700_000_000_000 });
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
});

const put = (rel: string, text: string) => {
  const p = join(home, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, text);
  return p;
};
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

describe('Claude Code settings.json', () => {
  const original = { permissions: { allow: ['Bash(ls:*)'] }, env: { DISABLE_TELEMETRY: '1', ANTHROPIC_MODEL: 'their-model' }, theme: 'dark' };

  it('merges its keys into the file, keeps a backup and leaves every other key as it was', () => {
    const file = put('.claude/settings.json', JSON.stringify(original, null, 2));
    const status = writer.apply('claude-code', TARGET);
    expect(json(file)).toEqual({
      permissions: { allow: ['Bash(ls:*)'] },
      env: { DISABLE_TELEMETRY: '1', ANTHROPIC_MODEL: 'my-model', ANTHROPIC_BASE_URL: 'http://127.0.0.1:8480', ANTHROPIC_AUTH_TOKEN: 'sk-sy-test-key' },
      theme: 'dark',
    });
    expect(status).toMatchObject({ applied: true, backup: `${file}.switchyard-backup`, keys: ['env.ANTHROPIC_BASE_URL', 'env.ANTHROPIC_AUTH_TOKEN', 'env.ANTHROPIC_MODEL'] });
    expect(json(`${file}.switchyard-backup`)).toEqual(original);
  });

  it('Restore puts back the values it replaced and removes the keys it added', () => {
    const file = put('.claude/settings.json', JSON.stringify(original));
    writer.apply('claude-code', TARGET);
    const status = writer.restore('claude-code');
    expect(json(file)).toEqual(original);
    expect(status.applied).toBe(false);
    expect(writer.status('claude-code').applied).toBe(false);
  });

  it('Restore leaves keys changed or added since Apply as they are now', () => {
    const file = put('.claude/settings.json', JSON.stringify(original));
    writer.apply('claude-code', TARGET);
    const edited = json(file);
    edited.env.ANTHROPIC_MODEL = 'changed-by-hand';
    edited.env.NEW_ONE = 'x';
    edited.verbose = true;
    writeFileSync(file, JSON.stringify(edited));
    writer.restore('claude-code');
    expect(json(file)).toEqual({ ...original, env: { DISABLE_TELEMETRY: '1', ANTHROPIC_MODEL: 'changed-by-hand', NEW_ONE: 'x' }, verbose: true });
  });

  it('a second Apply still restores to the file as it was before the first', () => {
    const file = put('.claude/settings.json', JSON.stringify(original));
    writer.apply('claude-code', TARGET);
    writer.apply('claude-code', { ...TARGET, clientKey: 'sk-sy-other', model: 'other-model' });
    expect(json(file).env.ANTHROPIC_AUTH_TOKEN).toBe('sk-sy-other');
    writer.restore('claude-code');
    expect(json(file)).toEqual(original);
    expect(json(`${file}.switchyard-backup`)).toEqual(original);
  });

  it('creates a missing file, and Restore removes it again', () => {
    const file = join(home, '.claude/settings.json');
    const status = writer.apply('claude-code', { ...TARGET, model: null });
    expect(json(file)).toEqual({ env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:8480', ANTHROPIC_AUTH_TOKEN: 'sk-sy-test-key' } });
    expect(status.backup).toBeNull();
    writer.restore('claude-code');
    expect(existsSync(file)).toBe(false);
  });

  it('leaves a file it cannot read as plain JSON untouched', () => {
    const text = '{\n  // my comment\n  "theme": "dark"\n}\n';
    const file = put('.claude/settings.json', text);
    expect(() => writer.apply('claude-code', TARGET)).toThrow(/not plain JSON/);
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(writer.status('claude-code').applied).toBe(false);
  });

  it('Restore without an Apply is refused', () => {
    expect(() => writer.restore('claude-code')).toThrow(/has not written/);
  });
});

describe('opencode opencode.json', () => {
  it('adds its provider next to the user\'s own and restores the model it replaced', () => {
    const original = { $schema: 'https://opencode.ai/config.json', model: 'anthropic/claude-x', provider: { mine: { npm: 'x', options: {} } } };
    const file = put('.config/opencode/opencode.json', JSON.stringify(original));
    writer.apply('opencode', TARGET);
    const doc = json(file);
    expect(doc.model).toBe('switchyard/my-model');
    expect(doc.provider.mine).toEqual({ npm: 'x', options: {} });
    expect(doc.provider.switchyard).toMatchObject({ npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://127.0.0.1:8480/v1', apiKey: 'sk-sy-test-key' }, models: { 'my-model': {} } });
    writer.restore('opencode');
    expect(json(file)).toEqual(original);
  });

  it('needs a model', () => {
    expect(() => writer.apply('opencode', { ...TARGET, model: null })).toThrow(/Choose a model/);
  });
});

describe('Codex config.toml', () => {
  const original = [
    '# my Codex settings',
    'model = "gpt-5.5"',
    'approval_policy = "on-request"  # keep asking',
    '',
    '[mcp_servers.docs]',
    'command = "docs-mcp"',
    '',
    '[profiles.fast]',
    'model = "gpt-5.5-mini"',
    '',
  ].join('\n');

  it('sets its root keys before the first table, appends its provider table and keeps comments and tables', () => {
    const file = put('.codex/config.toml', original);
    writer.apply('codex', TARGET);
    expect(readFileSync(file, 'utf8')).toBe(
      [
        '# my Codex settings',
        'model = "my-model"',
        'approval_policy = "on-request"  # keep asking',
        '',
        'model_provider = "switchyard"',
        '[mcp_servers.docs]',
        'command = "docs-mcp"',
        '',
        '[profiles.fast]',
        'model = "gpt-5.5-mini"',
        '',
        '[model_providers.switchyard]',
        'name = "Switchyard"',
        'base_url = "http://127.0.0.1:8480/v1"',
        'wire_api = "responses"',
        'http_headers = { Authorization = "Bearer sk-sy-test-key" }',
        '',
      ].join('\n'),
    );
    expect(readFileSync(`${file}.switchyard-backup`, 'utf8')).toBe(original);
  });

  it('Restore gives back the file byte for byte', () => {
    const file = put('.codex/config.toml', original);
    writer.apply('codex', TARGET);
    writer.restore('codex');
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('replaces an existing switchyard table and restores it, leaving a table edited since alone', () => {
    const withOld = `${original}\n[model_providers.switchyard]\nname = "old"\nbase_url = "http://127.0.0.1:9999/v1"\n`;
    const file = put('.codex/config.toml', withOld);
    writer.apply('codex', TARGET);
    expect(readFileSync(file, 'utf8')).not.toContain('9999');
    writer.restore('codex');
    expect(readFileSync(file, 'utf8')).toBe(withOld);

    writer.apply('codex', TARGET);
    const edited = readFileSync(file, 'utf8').replace('wire_api = "responses"', 'wire_api = "responses"\nrequest_max_retries = 2');
    writeFileSync(file, edited);
    writer.restore('codex');
    const after = readFileSync(file, 'utf8');
    expect(after).toContain('request_max_retries = 2');
    expect(after).toContain('model = "gpt-5.5"');
    expect(after).not.toContain('model_provider = "switchyard"');
  });
});
