// Responses API background mode (R-OTH-03). `background: true` asks the server to run the
// response on its own and be polled for it (GET /v1/responses/{id}); Switchyard routes each request
// to whichever connection serves it and keeps no response store, so a later poll would have
// nowhere to go. The request is served in the foreground instead: the flag is taken out before
// routing (native or translated alike), the client gets the finished response (or its stream) in
// the same HTTP answer, and a warning says so: a `Warning` response header on every answer to the
// request and a warn log line. A client that checks the status sees `completed` at once.
import type { Logger } from '../logger';
import { topLevelOf, type InboundCall } from './inbound';

export const FOREGROUND_WARNING = '299 switchyard "background mode is not supported: the response was served in the foreground, in this answer"';

/** Takes `background: true` out of a Responses request; the call is left as it is otherwise. */
export function inForeground(call: InboundCall, log: Logger): void {
  if (call.protocol !== 'openai-responses' || topLevelOf(call, 'background') === undefined) return;
  const asked = call.json.background === true;
  const { background: _dropped, ...rest } = call.json;
  call.json = rest;
  call.body = Buffer.from(JSON.stringify(rest));
  if (!asked) return;
  call.res.setHeader('warning', FOREGROUND_WARNING);
  log.warn('proxy.background_served_in_foreground', { requestId: call.requestId, model: typeof rest.model === 'string' ? rest.model : null });
}
