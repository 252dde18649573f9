// "Test connection": asks the upstream for its model list with the connection's credentials.
// A 2xx proves the key and the endpoint; the models found are offered to the user.
import type { ConnectionTestResult } from '../../../shared/model';
import type { Clock } from '../clock';
import type { ConnectionRegistry } from '../connections/registry';
import type { ConnectionRecord } from '../store/connectionsRepo';
import { readBodyText, type UpstreamClient } from '../upstream/client';
import { buildUpstreamHeaders, upstreamTarget } from '../upstream/headers';

export class ConnectionTester {
  constructor(
    private readonly registry: ConnectionRegistry,
    private readonly upstream: UpstreamClient,
    private readonly clock: Clock,
  ) {}

  /** `auth`: credentials headers that replace the stored secret's (a Claude subscription's access token). */
  async test(conn: ConnectionRecord, auth?: Record<string, string>): Promise<ConnectionTestResult> {
    if (this.registry.secretUnreadable(conn)) {
      return {
        ok: false,
        status: null,
        latencyMs: null,
        models: [],
        message: 'the stored key cannot be decrypted on this machine; enter it again',
      };
    }
    const secret = this.registry.secretOf(conn);
    const controller = new AbortController();
    const t0 = this.clock.monotonic();
    const cancel = this.clock.setTimer(() => controller.abort(), 15_000);
    try {
      const res = await this.upstream.request({
        ...upstreamTarget(conn, 'models'),
        method: 'GET',
        headers: { ...buildUpstreamHeaders(conn, secret, {}, { stream: false, hasBody: false }), ...auth },
        signal: controller.signal,
        connectTimeoutMs: 10_000,
        headersTimeoutMs: 15_000,
        idleTimeoutMs: 15_000,
      });
      const text = await readBodyText(res.body, 2 * 1024 * 1024);
      const latencyMs = Math.round(this.clock.monotonic() - t0);
      if (res.status >= 200 && res.status < 300) {
        return { ok: true, status: res.status, latencyMs, models: modelIds(text), message: 'the upstream accepted the credentials' };
      }
      return {
        ok: false,
        status: res.status,
        latencyMs,
        models: [],
        message: describeStatus(res.status, text),
      };
    } catch (err) {
      return {
        ok: false,
        status: null,
        latencyMs: null,
        models: [],
        message: controller.signal.aborted ? 'the upstream did not answer within 15 s' : (err as Error).message,
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

function describeStatus(status: number, body: string): string {
  let msg = '';
  try {
    const j = JSON.parse(body) as { error?: { message?: string } | string };
    msg = typeof j.error === 'string' ? j.error : (j.error?.message ?? '');
  } catch {
    msg = body.slice(0, 200);
  }
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
