// Agent conformance: the real claude-code CLI against the engine (see support/conformance.ts).
import { CLAUDE_CODE } from './support/agents';
import { describeAgent } from './support/conformance';

describeAgent(CLAUDE_CODE, { translatedTo: ['chat'] });
