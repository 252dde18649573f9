// Agent conformance: the real opencode CLI against the engine (see support/conformance.ts).
import { OPENCODE } from './support/agents';
import { describeAgent } from './support/conformance';

describeAgent(OPENCODE, { translatedTo: ['anthropic'] });
