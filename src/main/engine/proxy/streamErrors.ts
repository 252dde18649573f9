// Error text in and out of upstream streams: an SSE stream that opens with an error event is a
// failed attempt (it can still fail over), a stream that breaks after commit ends with an error
// event in the inbound protocol's shape, and an upstream error body yields a one-line message.
import type { ServerResponse } from 'node:http';
import type { InboundProtocol } from '../../../shared/model';
import type { SecretRedactor } from '../logger';
import { geminiErrorBody } from '../streams/googleErrors';

/** An SSE stream that opens with an error event (e.g. Anthropic "overloaded_error") is a failure. */
export function leadingStreamError(chunk: Buffer, redactor: SecretRedactor): { status: number; body: string; message: string } | null {
  const head = redactor.scrub(chunk.subarray(0, 2048).toString('utf8'));
  if (!/^(event:\s*error\b|data:\s*\{"(type":"error"|error"))/.test(head.trimStart())) return null;
  const dataLine = head.split('\n').find((l) => l.startsWith('data:'));
  const body = dataLine ? dataLine.slice(5).trim() : '{}';
  let type = '';
  let message = 'the upstream stream opened with an error';
  try {
    const j = JSON.parse(body) as { error?: { type?: string; message?: string; code?: string } };
    type = j.error?.type ?? j.error?.code ?? '';
    message = j.error?.message ?? message;
  } catch {
    // keep defaults
  }
  const status = /overloaded/.test(type) ? 529 : /rate_limit/.test(type) ? 429 : /auth/.test(type) ? 401 : 500;
  return { status, body, message };
}

export function errorMessageFrom(text: string): string | null {
  try {
    const j = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    if (typeof j.error === 'string') return j.error;
    return j.error?.message ?? j.message ?? null;
  } catch {
    return text ? text.slice(0, 200) : null;
  }
}

export function endWithStreamError(res: ServerResponse, protocol: InboundProtocol, contentType: string, message: string) {
  if (res.writableEnded || res.destroyed) return;
  if (contentType.includes('text/event-stream')) {
    const payload =
      protocol === 'anthropic-messages'
        ? `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: `upstream stream failed: ${message}` } })}\n\n`
        : protocol === 'gemini'
          ? `data: ${JSON.stringify(geminiErrorBody({ status: 502, message: `upstream stream failed: ${message}` }))}\n\n`
          : `data: ${JSON.stringify({ error: { message: `upstream stream failed: ${message}`, type: 'server_error', code: 'upstream_stream_failed' } })}\n\n`;
    res.end(payload);
  } else {
    res.destroy();
  }
}

