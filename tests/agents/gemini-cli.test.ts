// Agent conformance: the real Gemini CLI against the engine (see support/conformance.ts).
import { GEMINI_CLI } from './support/agents';
import { describeAgent } from './support/conformance';

describeAgent(GEMINI_CLI, {
  translatedTo: ['chat', 'anthropic'],
  knownFailures: {
    // Every Gemini CLI chat request carries generationConfig.topK 64 (its built-in chat-base config).
    'translated to chat': 'the Chat writer refuses topK with a 400 (codecs/chatRequest.ts) instead of dropping it',
    'translated to anthropic': 'the Anthropic writer refuses topK with a 400 (codecs/anthropicRequest.ts) although Anthropic has top_k',
  },
});
