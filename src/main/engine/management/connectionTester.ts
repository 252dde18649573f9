// "Test connection": asks the upstream for its model list with the connection's credentials.
// A 2xx proves the key and the endpoint; the models found are offered to the user. Everything it
// returns that came from the upstream (error text, model ids, transport errors) is scrubbed of every
// known secret first: an upstream that quotes the key back never gets it into the answer. A Gemini
// connection's list comes in Google's shape, a page at a time (geminiModelList.ts).
import type { ConnectionTestResult } from '../../../shared/model';
import type { Clock } from '../clock';
import type { ConnectionRegistry } from '../connections/registry';
import type { SecretRedactor } from '../logger';
import type { ConnectionRecord } from '../store/connectionsRepo';
import { readBodyText, type UpstreamClient } from '../upstream/client';
import { buildUpstreamHeaders, upstreamTarget } from '../upstream/headers';
import type { UpstreamTimeouts } from '../upstream/timeouts';
import { describeGeminiFailure, geminiModelPage } from './geminiModelList';

/** The test's own limit: it never waits longer than this, whatever the connection allows. */
const TEST_LIMIT_MS = 15_000;
/** Google's largest page of models, and how many pages a test reads at most. */
const GEMINI_PAGE_SIZE = 1000;
const GEMINI_MAX_PAGES = 5;
/** At most this many model ids are offered. */
const MODELS_MAX = 500;

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
    const gemini = conn.protocol === 'gemini';
    const target = upstreamTarget(conn, 'models');
    const headers = { ...buildUpstreamHeaders(conn, secret, {}, { stream: false, hasBody: false }), ...auth };
    const get = async (path: string) => {
      const res = await this.upstream.request({
        origin: target.origin,
        path,
        method: 'GET',
        headers,
        signal: controller.signal,
        connectTimeoutMs: Math.min(limits.connectMs, TEST_LIMIT_MS),
        headersTimeoutMs: Math.min(limits.headersMs, TEST_LIMIT_MS),
        idleTimeoutMs: Math.min(limits.idleMs, TEST_LIMIT_MS),
        proxy: this.registry.outboundProxyOf(conn),
      });
      return { status: res.status, text: await readBodyText(res.body, 2 * 1024 * 1024) };
    };
    try {
      const res = await get(gemini ? geminiPagePath(target.path, null) : target.path);
      let found: string[];
      if (gemini) {
        // Google's list comes a page at a time; a later page that fails ends the list, not the test.
        let page = res.status >= 200 && res.status < 300 ? geminiModelPage(res.text) : null;
        found = page?.models ?? [];
        for (let n = 1; page?.nextPageToken && n < GEMINI_MAX_PAGES && found.length < MODELS_MAX; n++) {
          const more = await get(geminiPagePath(target.path, page.nextPageToken));
          page = more.status >= 200 && more.status < 300 ? geminiModelPage(more.text) : null;
          found = found.concat(page?.models ?? []);
        }
      } else found = modelIds(res.text);
      const latencyMs = Math.round(this.clock.monotonic() - t0);
      if (res.status >= 200 && res.status < 300) {
        // A model id that holds a secret is dropped, not offered with a hole in it.
        const models = [...new Set(found)].slice(0, MODELS_MAX).filter((m) => this.redactor.scrub(m) === m);
        return { ok: true, status: res.status, latencyMs, models, message: 'the upstream accepted the credentials' };
      }
      return {
        ok: false,
        status: res.status,
        latencyMs,
        models: [],
        message: describeStatus(gemini, res.status, res.text, (t) => this.redactor.scrub(t)),
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

/** The models path with Google's page size and, after the first page, where the next one starts. */
function geminiPagePath(path: string, pageToken: string | null): string {
  const q = new URLSearchParams({ pageSize: String(GEMINI_PAGE_SIZE) });
  if (pageToken) q.set('pageToken', pageToken);
  return `${path}${path.includes('?') ? '&' : '?'}${q.toString()}`;
}

function modelIds(text: string): string[] {
  try {
    const j = JSON.parse(text) as { data?: { id?: unknown }[]; models?: { name?: unknown; id?: unknown }[] };
    const list = j.data ?? j.models ?? [];
    return list
      .map((m) => (typeof m.id === 'string' ? m.id : typeof (m as { name?: unknown }).name === 'string' ? (m as { name: string }).name : null))
      .filter((x): x is string => !!x)
      .slice(0, MODELS_MAX);
  } catch {
    return [];
  }
}

/** At most this much of the upstream's own words goes into the message (cut after scrubbing). */
const MESSAGE_MAX = 300;
const clip = (s: string) => (s.length > MESSAGE_MAX ? `${s.slice(0, MESSAGE_MAX)}…` : s);

function describeStatus(gemini: boolean, status: number, body: string, scrub: (t: string) => string): string {
  let what: string;
  let msg = '';
  if (gemini) {
    ({ what, message: msg } = describeGeminiFailure(status, body));
  } else {
    try {
      const j = JSON.parse(body) as { error?: { message?: unknown } | string };
      const m = typeof j.error === 'string' ? j.error : j.error?.message;
      msg = typeof m === 'string' ? m : '';
    } catch {
      msg = body;
    }
    what =
      status === 401 || status === 403
        ? 'the upstream rejected the credentials'
        : status === 404
          ? 'the upstream has no model list at this URL (check the base URL)'
          : status === 429
            ? 'the upstream is rate-limiting this key'
            : `the upstream answered ${status}`;
  }
  // Scrub the whole text before cutting it, so a cut never leaves half a key unmatched.
  msg = clip(scrub(msg));
  return msg ? `${what}: ${msg}` : what;
}
