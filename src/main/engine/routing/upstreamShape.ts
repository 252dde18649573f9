// Which API shape a target is called in. It follows the connection: an Anthropic-protocol
// connection speaks Anthropic Messages, a Gemini one Google's generateContent; an OpenAI-protocol one speaks Chat Completions, or the
// Responses API when the request came in as Responses and the connection serves `/responses`
// (`servesResponses`). When the upstream shape is the inbound one the request is native
// (byte-for-byte passthrough); otherwise it goes through a codec (../codecs).
import type { InboundProtocol, WireProtocol } from '../../../shared/model';
import type { ApiShape } from '../streams/shape';
import type { ConnectionRecord } from '../store/connectionsRepo';

/** The API shape of an inbound route (count_tokens is an Anthropic Messages request). */
export function inboundShapeOf(protocol: InboundProtocol): ApiShape {
  switch (protocol) {
    case 'anthropic-messages':
    case 'anthropic-count-tokens':
      return 'anthropic-messages';
    case 'openai-responses':
      return 'openai-responses';
    case 'gemini':
    case 'gemini-count-tokens':
      return 'gemini';
    default:
      return 'openai-chat';
  }
}

export const wireOfShape = (s: ApiShape): WireProtocol => (s === 'anthropic-messages' ? 'anthropic' : s === 'gemini' ? 'gemini' : 'openai');

/** The shape a connection is called in for a request of shape `inbound`. */
export function upstreamShapeFor(conn: Pick<ConnectionRecord, 'protocol' | 'servesResponses'>, inbound: ApiShape): ApiShape {
  if (conn.protocol === 'anthropic') return 'anthropic-messages';
  if (conn.protocol === 'gemini') return 'gemini';
  return inbound === 'openai-responses' && conn.servesResponses ? 'openai-responses' : 'openai-chat';
}

