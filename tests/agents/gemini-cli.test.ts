// Agent conformance: the real Gemini CLI against the engine (see support/conformance.ts).
import { GEMINI_CLI } from './support/agents';
import { describeAgent } from './support/conformance';

describeAgent(GEMINI_CLI, { translatedTo: ['chat', 'anthropic'] });
