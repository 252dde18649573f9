// Set-up for the Claude subscription integration tests: the real engine on a fake clock (lane
// waits, token expiry and memos are exact and never waited for), a fake Anthropic upstream that
// accepts only access tokens the fake OAuth server issued, the fake OAuth / account API server, and
// the real Anthropic SDK client. Lane waits are observed through the engine's `claude.lane_wait`
// log line (emitted right before the wait's timer is set), then the clock is advanced past them.
import Anthropic from '@anthropic-ai/sdk';
import { afterEach } from 'vitest';
import type { AttemptInterceptor } from '../../../src/main/engine/proxy/attempt';
import { seededRandom } from '../../../src/main/engine/random';
import type { ConnectionView, ProviderSpecificData } from '../../../src/shared/model';
import { FakeClaudeAuth } from '../../support/fakeClaudeAuth';
import { FakeClock } from '../../support/fakeClock';
import { FakeUpstream, type RecordedRequest, type ScriptedResponse } from '../../support/fakeUpstream';
import { ONE_ANSWER_ENV, startTestEngine, type TestEngine } from '../../support/harness';
import { ask, SELECTED, type Answer } from '../resilience/support';

export { ask, SELECTED, type Answer };

export const U = 'anthropic-ratelimit-unified-';
export const LANE = 'anthropic-usage-limit';
export const ORG = '2f1c3b8e-1111-4a5b-9c9d-0123456789ab';

export interface ClaudeRig {
  fake: FakeUpstream;
  auth: FakeClaudeAuth;
  clock: FakeClock;
  t: TestEngine;
  client: Anthropic;
  dataDir: string;
  /** A Claude subscription connection on the fake upstream, with tokens issued by the fake OAuth server. */
  addAccount(name: string, o?: AccountOptions): Promise<Account>;
  /** Requests the fake upstream saw on /v1/messages with this access token (or any, without). */
  messages(token?: string): RecordedRequest[];
  /** Stops the engine and starts a new one on the same data dir (fake servers and clock stay). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface AccountOptions {
  /** Access token lifetime from now on the fake clock (default 1 h). null: no expiry known. */
  expiresInMs?: number | null;
  refresh?: boolean;
  psd?: ProviderSpecificData;
  priority?: number;
  headersMs?: number;
}

export interface Account {
  conn: ConnectionView;
  accessToken: string;
  refreshToken: string;
}

export async function startClaudeRig(o: { interceptors?: AttemptInterceptor[]; dataDir?: string } = {}): Promise<ClaudeRig> {
  const fake = await FakeUpstream.start();
  const auth = await new FakeClaudeAuth().start();
  const clock = new FakeClock();
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'switchyard-claude-'));
  const boot = async () => {
    const t = await startTestEngine({
      // Each test reads an account's reaction to one answer per attempt, on the fake clock.
      env: ONE_ANSWER_ENV,
      dataDir,
      keepDataDir: true,
      engine: { clock, random: seededRandom(42), interceptors: o.interceptors, claudeCredentialsPath: join(dataDir, 'claude-credentials.json') },
    });
    await t.api.patchSettings({
      patch: {
        'claude.tokenUrl': auth.tokenUrl,
        'claude.authorizeUrl': auth.authorizeUrl,
        'claude.pasteRedirectUri': auth.pasteRedirectUri,
        'claude.apiBaseUrl': auth.apiBase,
      },
    });
    return t;
  };
  // The fake Anthropic API accepts only live access tokens of the fake OAuth server.
  fake.script({ path: '/v1/messages' }, [
    (req) =>
      req.key && auth.isValidAccess(req.key)
        ? undefined
        : { status: 401, json: { type: 'error', error: { type: 'authentication_error', message: 'Invalid bearer token' } } },
  ]);
  let t = await boot();
  const rig: ClaudeRig = {
    fake,
    auth,
    clock,
    get t() {
      return t;
    },
    get client() {
      return new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    },
    dataDir,
    async addAccount(name, a = {}) {
      const tok = auth.issue();
      const expiresIn = a.expiresInMs === undefined ? 3_600_000 : a.expiresInMs;
      const secret = JSON.stringify({
        accessToken: tok.accessToken,
        refreshToken: a.refresh === false ? null : tok.refreshToken,
        expiresAt: expiresIn === null ? null : clock.now() + expiresIn,
      });
      const conn = await t.api.createConnection({
        name,
        kind: 'claude-subscription',
        baseUrl: fake.anthropicUrl,
        secret,
        ...(a.priority !== undefined ? { priority: a.priority } : {}),
        ...(a.psd ? { providerSpecificData: a.psd } : {}),
        ...(a.headersMs ? { timeouts: { headersMs: a.headersMs } } : {}),
      });
      return { conn, accessToken: tok.accessToken, refreshToken: tok.refreshToken };
    },
    messages(token) {
      return fake.requests.filter((r) => r.path === '/v1/messages' && (token === undefined || r.key === token));
    },
    async restart() {
      await t.stop();
      t = await boot();
    },
    async stop() {
      await t.stop();
      await fake.close();
      await auth.close();
      const { rmSync } = await import('node:fs');
      if (!o.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return rig;
}

/** One rig per test, stopped after it. */
export function claudeRigPerTest() {
  let rig: ClaudeRig | null = null;
  afterEach(async () => {
    await rig?.stop();
    rig = null;
  });
  return { start: async (o: Parameters<typeof startClaudeRig>[0] = {}) => (rig = await startClaudeRig(o)) };
}

const sec = (ms: number) => String(Math.floor(ms / 1000));

/** The 5-hour limit 429 (R-CLA-02): unified-status rejected, the window's reset, and (eligible) the slow offer. */
export function limit429(o: { resetAt: number; offer?: boolean; extra?: Record<string, string> }): ScriptedResponse {
  return {
    status: 429,
    headers: {
      [`${U}status`]: 'rejected',
      [`${U}reset`]: sec(o.resetAt),
      [`${U}5h-status`]: 'rejected',
      [`${U}5h-utilization`]: '1.0',
      [`${U}5h-reset`]: sec(o.resetAt),
      [`${U}7d-utilization`]: '0.41',
      [`${U}7d-reset`]: sec(o.resetAt + 4 * 86_400_000),
      [`${U}representative-claim`]: 'five_hour',
      ...(o.offer !== false ? { [`${U}slow-offer`]: 'treatment' } : {}),
      ...o.extra,
    },
    json: { type: 'error', error: { type: 'rate_limit_error', message: 'This request would exceed your account\'s rate limit. Please try again later.' } },
  };
}

/** A normal answer inside the lane, with its slow status and the same 5-hour window. */
export function slowOk(resetAt: number, slowStatus = 'active', extra: Record<string, string> = {}): (req: RecordedRequest) => ScriptedResponse {
  return (req) => ({
    headers: {
      [`${U}status`]: 'allowed',
      [`${U}5h-utilization`]: '1.0',
      [`${U}5h-reset`]: sec(resetAt),
      [`${U}slow-status`]: slowStatus,
      ...extra,
    },
    json: anthropicOk(req),
  });
}

/** A lane answer that is not a success: slot_busy 429, a 529, or a lane-ending status. */
export function slowAnswer(status: number, resetAt: number, slowStatus: string | null, extra: Record<string, string> = {}): ScriptedResponse {
  return {
    status,
    headers: {
      [`${U}status`]: 'rejected',
      [`${U}5h-utilization`]: '1.0',
      [`${U}5h-reset`]: sec(resetAt),
      ...(slowStatus ? { [`${U}slow-status`]: slowStatus } : {}),
      ...extra,
    },
    json: { type: 'error', error: { type: status === 529 ? 'overloaded_error' : 'rate_limit_error', message: slowStatus ?? 'busy' } },
  };
}

/** A success with usage headers (no lane). */
export function okWithUsage(fiveHour: number, sevenDay: number, resetAt: number): (req: RecordedRequest) => ScriptedResponse {
  return (req) => ({
    headers: {
      [`${U}status`]: 'allowed',
      [`${U}5h-utilization`]: String(fiveHour),
      [`${U}5h-reset`]: sec(resetAt),
      [`${U}7d-utilization`]: String(sevenDay),
      [`${U}7d-reset`]: sec(resetAt + 3 * 86_400_000),
    },
    json: anthropicOk(req),
  });
}

function anthropicOk(req: RecordedRequest) {
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model: req.model ?? 'claude-x',
    content: [{ type: 'text', text: 'ok' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 1 },
  };
}

/** Did this upstream request carry the low-priority lane header? */
export const slowHeader = (r: RecordedRequest) => r.headers[LANE] === 'slow';

/** Waits (real time, bounded) until the engine logged `n` lane waits; returns the last wait in ms. */
export async function laneWait(t: TestEngine, n: number): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const waits = t.logs.lines.filter((l) => l.includes(' claude.lane_wait '));
    if (waits.length >= n) return (JSON.parse(waits[n - 1]!.slice(waits[n - 1]!.indexOf('{'))) as { waitMs: number }).waitMs;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the engine did not log ${n} lane waits`);
}

/** Waits (real time, bounded) until cond holds. */
export async function until(cond: () => boolean, what = 'condition'): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${what} never held`);
}

/** The cooldown-manager entry of one connection. */
export async function cooldownOf(t: TestEngine, id: string) {
  const view = await t.api.listCooldowns({});
  const e = view.connections.find((c) => c.connectionId === id);
  if (!e) throw new Error(`no cooldown entry for ${id}`);
  return e;
}

export async function accountOf(t: TestEngine, id: string) {
  const v = await t.api.listClaudeAccounts();
  const a = v.accounts.find((x) => x.connectionId === id);
  if (!a) throw new Error(`no Claude account ${id}`);
  return a;
}
