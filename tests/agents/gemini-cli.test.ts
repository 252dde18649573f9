// Agent conformance: the real Gemini CLI against the engine (see support/conformance.ts), also
// failing over mid-task from its native Gemini connection to a Chat and an Anthropic one.
import { GEMINI_CLI } from './support/agents';
import { describeAgent } from './support/conformance';

describeAgent(GEMINI_CLI, { translatedTo: ['chat', 'anthropic'], failoverTo: ['chat', 'anthropic'] });
