// "Test connection": asks the upstream for its model list with the connection's credentials.
// A 2xx proves the key and the endpoint; the models found are offered to the user. Everything it
// returns that came from the upstream (error text, model ids, transport errors) is scrubbed of every
// known secret first: an upstream that quotes the key back never gets it into the answer.
import type { ConnectionTestResult } from '../../../shared/model';
import type { Clock } from '../clock';
import type { ConnectionRegistry } from '../connections/registry';
import type { SecretRedactor } from '../logger';
import type { ConnectionRecord } from '../store/connectionsRepo';
import { readBodyText, type UpstreamClient } from '../upstream/client';
import { buildUpstreamHeaders, upstreamTarget } from '../upstream/headers';
import type { UpstreamTimeouts } from '../upstream/timeouts';

/** The test's own limit: it never waits longer than this, whatever the connection allows. */
const TEST_LIMIT_MS = 15_000;

export class ConnectionTester {
  constructor(
    private readonly registry: ConnectionRegistry,
    private readonly upstream: UpstreamClient,
    private readonly clock: Clock,
    private readonly redactor: SecretRedactor,
    /** The connection's upstream timeouts (its own, else the settings); each is capped at the test's limit. */
    private readonly timeouts: (conn: ConnectionRecord) => UpstreamTimeouts,
  ) {}

  /** `auth`: credentials headers that replace the stored secret's (a Claude subscription's access token). */
  async test(conn: ConnectionRecord, auth?: Record<string, string>): Promise<ConnectionTestResult> {
    const r = await this.run(conn, auth);
    return { ...r, message: this.redactor.scrub(r.message) };
  }

  private async run(conn: ConnectionRecord, auth?: Record<string, string>): Promise<ConnectionTestResult> {
    if (this.registry.secretUnreadable(conn)) {
      return {
        ok: false,
        status: null,
        latencyMs: null,
        models: [],
        message: 'the stored key cannot be decrypted on this machine; enter it again',
      };
    }
    if (this.registry.outboundProxyUnreadable(conn)) {
      return { ok: false, status: null, latencyMs: null, models: [], message: 'the outbound proxy cannot be decrypted on this machine; enter it again' };
    }
    const secret = this.registry.secretOf(conn);
    const controller = new AbortController();
    const t0 = this.clock.monotonic();
    const cancel = this.clock.setTimer(() => controller.abort(), TEST_LIMIT_MS);
    const limits = this.timeouts(conn);
    try {
      const res = await this.upstream.request({
        ...upstreamTarget(conn, 'models'),
        method: 'GET',
        headers: { ...buildUpstreamHeaders(conn, secret, {}, { stream: false, hasBody: false }), ...auth },
        signal: controller.signal,
        connectTimeoutMs: Math.min(limits.connectMs, TEST_LIMIT_MS),
        headersTimeoutMs: Math.min(limits.headersMs, TEST_LIMIT_MS),
        idleTimeoutMs: Math.min(limits.idleMs, TEST_LIMIT_MS),
        proxy: this.registry.outboundProxyOf(conn),
      });
      const text = await readBodyText(res.body, 2 * 1024 * 1024);
      const latencyMs = Math.round(this.clock.monotonic() - t0);
      if (res.status >= 200 && res.status < 300) {
        // A model id that holds a secret is dropped, not offered with a hole in it.
        const models = modelIds(text).filter((m) => this.redactor.scrub(m) === m);
        return { ok: true, status: res.status, latencyMs, models, message: 'the upstream accepted the credentials' };
      }
      return {
        ok: false,
        status: res.status,
        latencyMs,
        models: [],
        message: describeStatus(res.status, text, (t) => this.redactor.scrub(t)),
      };
    } catch (err) {
      return {
        ok: false,
        status: null,
        latencyMs: null,
        models: [],
        message: controller.signal.aborted
          ? `the upstream did not answer within ${TEST_LIMIT_MS / 1000} s`
          : clip(this.redactor.scrub(String((err as Error).message))),
      };
    } finally {
      cancel();
    }
  }
}

function modelIds(text: string): string[] {
  try {
    const j = JSON.parse(text) as { data?: { id?: unknown }[]; models?: { name?: unknown; id?: unknown }[] };
    const list = j.data ?? j.models ?? [];
    return list
      .map((m) => (typeof m.id === 'string' ? m.id : typeof (m as { name?: unknown }).name === 'string' ? (m as { name: string }).name : null))
      .filter((x): x is string => !!x)
      .slice(0, 500);
  } catch {
    return [];
  }
}

/** At most this much of the upstream's own words goes into the message (cut after scrubbing). */
const MESSAGE_MAX = 300;
const clip = (s: string) => (s.length > MESSAGE_MAX ? `${s.slice(0, MESSAGE_MAX)}…` : s);

function describeStatus(status: number, body: string, scrub: (t: string) => string): string {
  let msg = '';
  try {
    const j = JSON.parse(body) as { error?: { message?: unknown } | string };
    const m = typeof j.error === 'string' ? j.error : j.error?.message;
    msg = typeof m === 'string' ? m : '';
  } catch {
    msg = body;
  }
  // Scrub the whole text before cutting it, so a cut never leaves half a key unmatched.
  msg = clip(scrub(msg));
  const what =
    status === 401 || status === 403
      ? 'the upstream rejected the credentials'
      : status === 404
        ? 'the upstream has no model list at this URL (check the base URL)'
        : status === 429
          ? 'the upstream is rate-limiting this key'
          : `the upstream answered ${status}`;
  return msg ? `${what}: ${msg}` : what;
}
