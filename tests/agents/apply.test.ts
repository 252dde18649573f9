// "Apply" end to end: the management API writes Codex's and Claude Code's own configuration files
// in a sandbox HOME, the real CLI then finishes the tool task with nothing else set up, and
// "Restore" takes the files back to how they were.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../support/harness';
import { CLAUDE_CODE, CODEX, installed } from './support/agents';
import { MODEL } from './support/conformance';
import { createSandbox, EgressGuard, runBounded, type Sandbox } from './support/sandbox';
import { FINAL_TEXT, startToolTaskUpstream, TOOL_OUTPUT } from './support/toolTaskUpstream';

const PROMPT = 'Run the shell command that prints the marker, then tell me what it printed.';
const ready = installed(CODEX).skipReason === null && installed(CLAUDE_CODE).skipReason === null;
if (!ready) console.log('[agent conformance] skipping Apply end to end: Codex or Claude Code is not installed');

describe.skipIf(!ready)('agent conformance: Apply writes a configuration the real CLI runs with', () => {
  let fake: FakeUpstream;
  let guard: EgressGuard;
  let sb: Sandbox;
  let t: TestEngine;
  let keyId: string;
  beforeAll(async () => {
    fake = await startToolTaskUpstream();
    guard = await EgressGuard.start();
    sb = createSandbox(guard, 'apply');
    t = await startTestEngine({ env: { RATE_LIMIT_AUTO_ENABLE: 'false' }, engine: { agentHome: sb.home } });
    keyId = (await t.api.listClientKeys())[0]!.id;
    await t.addConnection({ name: 'Chat', kind: 'openai-compatible', provider: 'fakechat', baseUrl: fake.openaiUrl, secret: 'key-chat-000000000001', models: [MODEL] });
  });
  afterAll(async () => {
    await t?.stop();
    sb?.dispose();
    await fake?.close();
    await guard?.close();
  });

  it('Codex: Apply, run, Restore', async () => {
    const status = await t.api.applyAgentConfig({ agent: 'codex', keyId, model: MODEL });
    expect(status).toMatchObject({ applied: true, file: join(sb.home, '.codex', 'config.toml'), backup: null });
    const quiet = ['-c', 'check_for_update_on_startup=false', '-c', 'analytics.enabled=false', '-c', 'features.plugins=false', '-c', 'features.apps=false', '-c', 'features.remote_models=false'];
    const r = await runBounded(join(import.meta.dirname, '../../node_modules/.bin/codex'), ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', ...quiet, PROMPT], {
      cwd: sb.work,
      env: { ...sb.env, CODEX_HOME: join(sb.home, '.codex') },
      timeoutMs: CODEX.timeoutMs,
    });
    expect(r.stdout, r.stderr.slice(-1500)).toContain(FINAL_TEXT);
    expect(fake.requests.some((q) => q.rawBody.includes(TOOL_OUTPUT))).toBe(true);
    expect((await t.api.restoreAgentConfig({ agent: 'codex' })).applied).toBe(false);
    expect(existsSync(status.file)).toBe(false);
  }, 120_000);

  it('Claude Code: Apply, run, Restore', async () => {
    const status = await t.api.applyAgentConfig({ agent: 'claude-code', keyId, model: MODEL });
    expect(JSON.parse(readFileSync(status.file, 'utf8')).env.ANTHROPIC_BASE_URL).toBe(t.proxyUrl);
    const r = await runBounded(join(import.meta.dirname, '../../node_modules/.bin/claude'), ['-p', PROMPT, '--dangerously-skip-permissions'], {
      cwd: sb.work,
      env: { ...sb.env, CLAUDE_CONFIG_DIR: join(sb.home, '.claude'), ANTHROPIC_SMALL_FAST_MODEL: MODEL, IS_SANDBOX: '1' },
      timeoutMs: CLAUDE_CODE.timeoutMs,
    });
    expect(r.stdout, r.stderr.slice(-1500)).toContain(FINAL_TEXT);
    await t.api.restoreAgentConfig({ agent: 'claude-code' });
    expect(existsSync(status.file)).toBe(false);
  }, 120_000);
});
