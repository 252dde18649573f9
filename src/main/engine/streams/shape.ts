// The four API shapes Switchyard speaks, inbound and upstream. Native (inbound shape = upstream
// shape) is byte-for-byte passthrough; anything else goes through a codec (../codecs).

export type ApiShape = 'anthropic-messages' | 'openai-chat' | 'openai-responses' | 'gemini';

export const API_SHAPES: readonly ApiShape[] = ['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'];
