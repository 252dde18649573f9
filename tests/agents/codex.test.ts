// Agent conformance: the real codex CLI against the engine (see support/conformance.ts).
import { CODEX } from './support/agents';
import { describeAgent } from './support/conformance';

describeAgent(CODEX, { translatedTo: ['chat', 'anthropic'] });
