// The wire protocols a connection speaks, named for people: messages, badges and hints say
// "Anthropic", "OpenAI" or "Gemini" (Google's Generative Language API), never the internal word.
import type { WireProtocol } from './model';

export const WIRE_PROTOCOL_NAMES: Record<WireProtocol, string> = {
  anthropic: 'Anthropic',
  openai: 'OpenAI',
  gemini: 'Gemini',
};

/** "Anthropic", "OpenAI" or "Gemini". */
export const protocolName = (p: WireProtocol): string => WIRE_PROTOCOL_NAMES[p];
