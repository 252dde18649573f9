// What a request body must hold before anything routes it: a model id within bounds (length,
// no control or broken characters, shared/modelIds.ts), and for count_tokens the message list
// Anthropic's API requires. A failed check is a typed 400 in the inbound protocol's shape, thrown
// as a ProxyError before a target is planned, so no upstream is called and nothing is counted
// against a connection.
import { modelIdProblem } from '../../../shared/modelIds';
import { ProxyError } from './errors';
import { requestedModel, type InboundCall } from './inbound';

/** The request's model id, or a typed 400. */
export function checkedModel(call: Pick<InboundCall, 'json' | 'topLevel' | 'protocol' | 'gemini'>): string {
  const model = requestedModel(call);
  if (typeof model !== 'string' || model.trim() === '') {
    throw new ProxyError(400, 'missing_model', 'the request needs a "model" string', { param: 'model' });
  }
  const problem = modelIdProblem(model);
  if (problem) throw new ProxyError(400, 'invalid_model', problem, { param: 'model' });
  if (call.protocol === 'anthropic-count-tokens') checkCountTokens(call.json);
  return model;
}

/** count_tokens needs `messages`: a list of objects, each with a role. */
function checkCountTokens(json: Record<string, unknown>): void {
  const messages = json.messages;
  if (!Array.isArray(messages)) {
    throw new ProxyError(400, 'invalid_request', 'messages: a list of messages is required', { param: 'messages' });
  }
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (m === null || typeof m !== 'object' || Array.isArray(m) || typeof (m as { role?: unknown }).role !== 'string') {
      throw new ProxyError(400, 'invalid_request', `messages.${i}: each message is an object with a "role"`, { param: `messages.${i}` });
    }
  }
}
