// Agent conformance: the real qwen-code CLI against the engine (see support/conformance.ts).
import { QWEN_CODE } from './support/agents';
import { describeAgent } from './support/conformance';

describeAgent(QWEN_CODE, { translatedTo: ['anthropic'] });
