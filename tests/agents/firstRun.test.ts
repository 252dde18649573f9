// Claude Code's first run as a new user makes it: one OpenAI-compatible connection that lists only
// its own model, and Claude Code asking for its own default (a claude-* id). The run ends in success
// or in an error that names the fix; after "Route model ids" (claude-* → that connection's model)
// the next run finishes the tool task.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../support/harness';
import { CLAUDE_CODE, dashboardSnippet, installed } from './support/agents';
import { createSandbox, EgressGuard, runBounded, type Sandbox } from './support/sandbox';
import { FINAL_TEXT, startToolTaskUpstream } from './support/toolTaskUpstream';

const PROMPT = 'Run the shell command that prints the marker, then tell me what it printed.';
const UPSTREAM_MODEL = 'deepseek-chat';
const ready = installed(CLAUDE_CODE).skipReason === null;
if (!ready) console.log('[agent conformance] skipping the Claude Code first run: Claude Code is not installed');

describe.skipIf(!ready)('agent conformance: Claude Code first run on an OpenAI-compatible connection', () => {
  let fake: FakeUpstream;
  let guard: EgressGuard;
  let sb: Sandbox;
  let t: TestEngine;
  beforeAll(async () => {
    fake = await startToolTaskUpstream();
    guard = await EgressGuard.start();
    sb = createSandbox(guard, 'first-run');
    t = await startTestEngine({ env: { RATE_LIMIT_AUTO_ENABLE: 'false' } });
  });
  afterAll(async () => {
    await t?.stop();
    sb?.dispose();
    await fake?.close();
    await guard?.close();
  });

  /** Claude Code with the page's shell snippet (no model: it asks for its own default ids). */
  const claude = () => {
    const snippet = dashboardSnippet('claude-code', 'shell', { proxyUrl: t.proxyUrl, clientKey: t.clientKey, model: '', prompt: PROMPT });
    const env: Record<string, string> = { ...sb.env, CLAUDE_CONFIG_DIR: join(sb.home, '.claude'), IS_SANDBOX: '1' };
    for (const m of snippet.matchAll(/^export (\w+)="([^"]*)"$/gm)) env[m[1]!] = m[2]!;
    delete env.ANTHROPIC_MODEL;
    return runBounded(join(import.meta.dirname, '../../node_modules/.bin/claude'), ['-p', PROMPT, '--dangerously-skip-permissions'], { cwd: sb.work, env, timeoutMs: CLAUDE_CODE.timeoutMs });
  };

  let connId = '';
  const firstRun = async () => {
    connId ||= (await t.addConnection({ name: 'DeepSeek', kind: 'openai-compatible', provider: 'deepseek', baseUrl: fake.openaiUrl, secret: 'key-deepseek-00000001', models: [UPSTREAM_MODEL] })).id;
    return claude();
  };

  // Claude Code 2.1.332 does not show a 404 model error's message (it prints its own "There's an
  // issue with the selected model"), so the engine answers it, and only it, with a 400 it prints.
  it('the first run ends in success or in an error that names the fix', async () => {
    const first = await firstRun();
    const said = first.stdout + first.stderr;
    if (!said.includes(FINAL_TEXT)) expect(said, said.slice(-1500)).toContain('Route model ids');
  }, 120_000);

  it('after "Route model ids" (claude-* to the connection\'s model) the next run finishes the task', async () => {
    await firstRun();
    await t.api.routeAgentModels({ pattern: 'claude-*', connectionId: connId, model: UPSTREAM_MODEL });
    fake.requests.length = 0;
    const second = await claude();
    expect(second.stdout, second.stderr.slice(-1500)).toContain(FINAL_TEXT);
    const calls = fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((r) => r.model === UPSTREAM_MODEL)).toBe(true);
  }, 120_000);
});
