// The agent conformance cases, one describe() per real agent CLI: the two-turn tool task served
// natively and through translation, a failover, and the session kept on one connection. Each case
// starts a fresh engine (the real headless shell on port 0) in front of the scripted upstream, runs
// the agent once in a sandbox HOME and judges what the upstream saw and what the agent printed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionCreateInput } from '../../../src/shared/contract';
import { geminiError, type FakeUpstream, type RecordedRequest } from '../../support/fakeUpstream';
import { startTestEngine } from '../../support/harness';
import { installed, type AgentSpec, type UpstreamShape } from './agents';
import { createSandbox, EgressGuard, runBounded, type RunResult } from './sandbox';
import { FINAL_TEXT, scriptToolTask, startToolTaskUpstream, TOOL_OUTPUT } from './toolTaskUpstream';

export const MODEL = 'conformance-model';
const PROMPT = 'Run the shell command that prints the marker, then tell me what it printed.';
const ENGINE_ENV = { RATE_LIMIT_AUTO_ENABLE: 'false' };

export type CaseName = 'native' | `translated to ${UpstreamShape}` | 'failover' | `failover to ${UpstreamShape}` | 'session';

/** Cases an agent is known to fail until an engine defect is fixed: case → the defect. */
export type KnownFailures = Partial<Record<CaseName, string>>;

interface ConnSpec {
  shape: UpstreamShape;
  key: string;
  priority: number;
}

interface Run {
  result: RunResult;
  /** The model calls the upstream received (not model listings), in order. */
  calls: RecordedRequest[];
  egress: string[];
}

const MODEL_PATH = /\/(messages|chat\/completions|responses)$|:(generateContent|streamGenerateContent)$/;

function connection(fake: FakeUpstream, c: ConnSpec, name: string): ConnectionCreateInput {
  const base = { name, secret: c.key, priority: c.priority, models: [MODEL] };
  if (c.shape === 'anthropic') return { ...base, kind: 'anthropic', baseUrl: fake.anthropicUrl };
  if (c.shape === 'gemini') return { ...base, kind: 'gemini', baseUrl: fake.geminiUrl };
  if (c.shape === 'chat') return { ...base, kind: 'openai-compatible', provider: 'fakechat', baseUrl: fake.openaiUrl, servesResponses: false };
  return { ...base, kind: 'openai', baseUrl: fake.openaiUrl, servesResponses: true };
}

/** The shape an upstream call was made in, from its path. */
function shapeOfCall(r: RecordedRequest): UpstreamShape {
  if (r.path.endsWith('/messages')) return 'anthropic';
  if (r.path.endsWith('/chat/completions')) return 'chat';
  if (r.gemini) return 'gemini';
  return 'responses';
}

/**
 * `failoverTo`: shapes a failing native connection fails over to mid-task (the agent's turns then
 * served through translation), besides the failover between two native connections.
 */
export function describeAgent(spec: AgentSpec, o: { translatedTo: UpstreamShape[]; failoverTo?: UpstreamShape[]; knownFailures?: KnownFailures }) {
  const avail = installed(spec);
  const selected = (process.env.SWITCHYARD_AGENTS ?? '').split(',').filter(Boolean);
  const deselected = selected.length > 0 && !selected.includes(spec.id);
  const skipReason = avail.skipReason ?? (deselected ? `not in SWITCHYARD_AGENTS=${process.env.SWITCHYARD_AGENTS}` : null);

  describe.skipIf(skipReason !== null)(`agent conformance: ${spec.id} ${avail.version ?? ''}`.trim(), () => {
    let fake: FakeUpstream;
    let guard: EgressGuard;
    beforeAll(async () => {
      fake = await startToolTaskUpstream();
      guard = await EgressGuard.start();
      console.log(`[agent conformance] running ${spec.id} ${avail.version} (${spec.pkg})`);
    });
    afterAll(async () => {
      await fake?.close();
      await guard?.close();
    });

    /** One agent run against a fresh engine with these connections (and the upstream's script). */
    async function run(conns: ConnSpec[], script?: (fake: FakeUpstream) => void): Promise<Run> {
      fake.reset();
      scriptToolTask(fake);
      script?.(fake);
      const egressBefore = guard.attempts.length;
      const t = await startTestEngine({ env: ENGINE_ENV });
      const sb = createSandbox(guard, spec.id);
      try {
        for (const [i, c] of conns.entries()) await t.addConnection(connection(fake, c, `Conn ${i + 1}`));
        const l = spec.launch(sb, { proxyUrl: t.proxyUrl, clientKey: t.clientKey, model: MODEL, prompt: PROMPT });
        const result = await runBounded(l.cmd, l.args, { cwd: sb.work, env: l.env, timeoutMs: spec.timeoutMs });
        const egress = guard.attempts.slice(egressBefore);
        if (egress.length) console.log(`[agent conformance] ${spec.id} tried to reach (refused): ${[...new Set(egress)].join(', ')}`);
        return { result, calls: fake.requests.filter((r) => MODEL_PATH.test(r.path)), egress };
      } finally {
        await t.stop();
        sb.dispose();
      }
    }

    /** The task finished: the tool ran, its output went upstream, the final answer was printed. */
    function expectTaskDone(r: Run, shape: UpstreamShape) {
      const diag = `exit ${r.result.code}${r.result.timedOut ? ' (timed out)' : ''}\nstdout: ${r.result.stdout.slice(-1500)}\nstderr: ${r.result.stderr.slice(-1500)}`;
      expect(r.result.timedOut, diag).toBe(false);
      expect(r.result.code, diag).toBe(0);
      expect(r.result.stdout, diag).toContain(FINAL_TEXT);
      expect(r.calls.some((c) => c.rawBody.includes(TOOL_OUTPUT)), 'the tool output reached the model').toBe(true);
      expect(new Set(r.calls.map(shapeOfCall)), 'every upstream call in the connection shape').toEqual(new Set([shape]));
      for (const e of r.egress) expect(spec.knownEgress, `${spec.id} tried to reach ${e}`).toContain(e.replace(/^CONNECT /, ''));
    }

    const known = o.knownFailures ?? {};
    /** it(), or it.fails() for a case known to fail until the named defect is fixed. */
    function conformanceCase(name: CaseName, body: () => Promise<void>) {
      const reason = known[name];
      const timeout = spec.timeoutMs + 30_000;
      if (reason) it.fails(`${name} (known to fail: ${reason})`, body, timeout);
      else it(name, body, timeout);
    }

    conformanceCase('native', async () => {
      const r = await run([{ shape: spec.native, key: 'key-native-0000000001', priority: 1 }]);
      expectTaskDone(r, spec.native);
    });

    for (const shape of o.translatedTo) {
      conformanceCase(`translated to ${shape}`, async () => {
        const r = await run([{ shape, key: 'key-translated-000001', priority: 1 }]);
        expectTaskDone(r, shape);
      });
    }

    conformanceCase('failover', async () => {
      const failing = 'key-failing-000000001';
      const serving = 'key-serving-000000002';
      // The errors in the connection's own shape (Google's error body for a Gemini upstream).
      const error = (status: number, type: string, googleStatus: string, message: string) =>
        spec.native === 'gemini' ? geminiError(status, googleStatus, message) : { type: 'error', error: { type, message, code: type } };
      const r = await run(
        [
          { shape: spec.native, key: failing, priority: 1 },
          { shape: spec.native, key: serving, priority: 2 },
        ],
        (f) =>
          f.script({ key: failing }, [
            { status: 429, headers: { 'retry-after': '30' }, json: error(429, 'rate_limit_error', 'RESOURCE_EXHAUSTED', 'rate limited') },
            { status: 503, json: error(503, 'overloaded_error', 'UNAVAILABLE', 'unavailable') },
          ]),
      );
      expectTaskDone(r, spec.native);
      expect(r.calls.filter((c) => c.key === failing).length, 'the first connection was tried').toBeGreaterThan(0);
      expect(r.calls.filter((c) => c.key === serving).length, 'the second connection served').toBeGreaterThanOrEqual(2);
    });

    for (const shape of o.failoverTo ?? []) {
      conformanceCase(`failover to ${shape}`, async () => {
        const failing = 'key-failing-000000001';
        const serving = 'key-serving-000000002';
        // The native connection serves the first turn, then answers 503 to everything: the rest of the task moves to the other shape.
        const down = spec.native === 'gemini' ? geminiError(503, 'UNAVAILABLE', 'unavailable') : { type: 'error', error: { type: 'overloaded_error', message: 'unavailable' } };
        const r = await run(
          [
            { shape: spec.native, key: failing, priority: 1 },
            { shape, key: serving, priority: 2 },
          ],
          (f) => f.script({ key: failing }, [(req) => (req.rawBody.includes(TOOL_OUTPUT) ? { status: 503, json: down } : undefined)]),
        );
        const diag = `exit ${r.result.code}\nstdout: ${r.result.stdout.slice(-1500)}\nstderr: ${r.result.stderr.slice(-1500)}`;
        expect(r.result.code, diag).toBe(0);
        expect(r.result.stdout, diag).toContain(FINAL_TEXT);
        const first = r.calls.filter((c) => c.key === failing);
        const second = r.calls.filter((c) => c.key === serving);
        expect(first.length, 'the native connection served the first turn').toBeGreaterThan(0);
        expect(second.some((c) => c.rawBody.includes(TOOL_OUTPUT)), 'the tool output reached the model on the other shape').toBe(true);
        expect(new Set(second.map(shapeOfCall)), 'the second connection was called in its own shape').toEqual(new Set([shape]));
      });
    }

    conformanceCase('session', async () => {
      const keys = ['key-one-000000000001', 'key-two-000000000002', 'key-three-0000000003'];
      const r = await run(keys.map((key) => ({ shape: spec.native, key, priority: 1 })));
      expectTaskDone(r, spec.native);
      expect(r.calls.length, 'at least two turns').toBeGreaterThanOrEqual(2);
      // Round-robin would spread the turns over the three connections; a pinned session keeps them on one.
      expect(new Set(r.calls.map((c) => c.key)).size, `connections used: ${r.calls.map((c) => c.key).join(', ')}`).toBe(1);
    });
  });
  if (skipReason) console.log(`[agent conformance] skipping ${spec.id}: ${skipReason}`);
}
