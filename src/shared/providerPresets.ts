// Provider presets (issue 22): what the add-connection form needs for the common providers, so
// setting one up is picking it and pasting a key. Plain data: the connection kind (which API shape
// is spoken), the provider id (connections of one provider share a breaker), the base URL, whether
// a key is needed, a few well-known model ids, and where to get a key (or the server).
import type { ConnectionKind } from './model';

export interface ProviderPreset {
  /** Stable id (the picker's value). */
  id: string;
  /** What the picker and the new connection's name show. */
  name: string;
  kind: ConnectionKind;
  /** Provider id given to the connection. */
  provider: string;
  baseUrl: string;
  keyRequired: boolean;
  /** A few well-known model ids, filled into the form's model list (the connection still accepts others). */
  models: string[];
  /** Where to create a key (or, for a local server, where to get it). */
  keyUrl: string;
  /** One line under the picker. */
  note: string;
}

export const PROVIDER_PRESETS: readonly ProviderPreset[] = [
  {
    id: 'openai',
    name: 'OpenAI',
    kind: 'openai',
    provider: 'openai',
    baseUrl: 'https://api.openai.com/v1',
    keyRequired: true,
    models: ['gpt-4.1', 'gpt-4.1-mini', 'gpt-4o', 'o3', 'o4-mini'],
    keyUrl: 'https://platform.openai.com/api-keys',
    note: 'Speaks Chat Completions and the Responses API.',
  },
  {
    id: 'anthropic',
    name: 'Anthropic',
    kind: 'anthropic',
    provider: 'anthropic',
    baseUrl: 'https://api.anthropic.com',
    keyRequired: true,
    models: ['claude-sonnet-4-5', 'claude-opus-4-1', 'claude-3-5-haiku-latest'],
    keyUrl: 'https://console.anthropic.com/settings/keys',
    note: 'An API key from the Anthropic Console (a Claude Pro or Max plan is added as a Claude subscription instead).',
  },
  {
    id: 'openrouter',
    name: 'OpenRouter',
    kind: 'openai-compatible',
    provider: 'openrouter',
    baseUrl: 'https://openrouter.ai/api/v1',
    keyRequired: true,
    models: ['openai/gpt-4o', 'anthropic/claude-sonnet-4', 'google/gemini-2.5-pro', 'deepseek/deepseek-chat'],
    keyUrl: 'https://openrouter.ai/keys',
    note: 'One key for many providers; model ids carry the provider ("openai/gpt-4o").',
  },
  {
    id: 'google',
    name: 'Google AI Studio (Gemini)',
    kind: 'gemini',
    provider: 'gemini',
    baseUrl: 'https://generativelanguage.googleapis.com',
    keyRequired: true,
    models: ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite'],
    keyUrl: 'https://aistudio.google.com/apikey',
    note: 'A Google AI Studio key, spoken to in Google\'s own API: Gemini CLI natively, every other agent through translation.',
  },
  {
    id: 'groq',
    name: 'Groq',
    kind: 'openai-compatible',
    provider: 'groq',
    baseUrl: 'https://api.groq.com/openai/v1',
    keyRequired: true,
    models: ['llama-3.3-70b-versatile', 'llama-3.1-8b-instant'],
    keyUrl: 'https://console.groq.com/keys',
    note: 'Fast open models; the free tier has low per-minute limits.',
  },
  {
    id: 'deepseek',
    name: 'DeepSeek',
    kind: 'openai-compatible',
    provider: 'deepseek',
    baseUrl: 'https://api.deepseek.com/v1',
    keyRequired: true,
    models: ['deepseek-chat', 'deepseek-reasoner'],
    keyUrl: 'https://platform.deepseek.com/api_keys',
    note: 'DeepSeek\'s own API.',
  },
  {
    id: 'mistral',
    name: 'Mistral',
    kind: 'openai-compatible',
    provider: 'mistral',
    baseUrl: 'https://api.mistral.ai/v1',
    keyRequired: true,
    models: ['mistral-large-latest', 'mistral-small-latest', 'codestral-latest'],
    keyUrl: 'https://console.mistral.ai/api-keys',
    note: 'Mistral\'s La Plateforme API.',
  },
  {
    id: 'xai',
    name: 'xAI (Grok)',
    kind: 'openai-compatible',
    provider: 'xai',
    baseUrl: 'https://api.x.ai/v1',
    keyRequired: true,
    models: ['grok-4', 'grok-3', 'grok-3-mini'],
    keyUrl: 'https://console.x.ai',
    note: 'Grok models through xAI\'s API.',
  },
  {
    id: 'together',
    name: 'Together AI',
    kind: 'openai-compatible',
    provider: 'together',
    baseUrl: 'https://api.together.xyz/v1',
    keyRequired: true,
    models: ['meta-llama/Llama-3.3-70B-Instruct-Turbo', 'deepseek-ai/DeepSeek-V3', 'Qwen/Qwen2.5-Coder-32B-Instruct'],
    keyUrl: 'https://api.together.xyz/settings/api-keys',
    note: 'Hosted open models.',
  },
  {
    id: 'fireworks',
    name: 'Fireworks AI',
    kind: 'openai-compatible',
    provider: 'fireworks',
    baseUrl: 'https://api.fireworks.ai/inference/v1',
    keyRequired: true,
    models: ['accounts/fireworks/models/llama-v3p3-70b-instruct', 'accounts/fireworks/models/deepseek-v3'],
    keyUrl: 'https://fireworks.ai/account/api-keys',
    note: 'Hosted open models; ids start with accounts/fireworks/models/.',
  },
  {
    id: 'cerebras',
    name: 'Cerebras',
    kind: 'openai-compatible',
    provider: 'cerebras',
    baseUrl: 'https://api.cerebras.ai/v1',
    keyRequired: true,
    models: ['llama-3.3-70b', 'llama3.1-8b', 'qwen-3-32b'],
    keyUrl: 'https://cloud.cerebras.ai',
    note: 'Very fast inference of open models.',
  },
  {
    id: 'ollama',
    name: 'Ollama (this computer)',
    kind: 'local',
    provider: 'ollama',
    baseUrl: 'http://127.0.0.1:11434/v1',
    keyRequired: false,
    models: [],
    keyUrl: 'https://ollama.com/download',
    note: 'No key. Pull a model first (ollama pull …), then Test lists what is installed.',
  },
  {
    id: 'lmstudio',
    name: 'LM Studio (this computer)',
    kind: 'local',
    provider: 'lmstudio',
    baseUrl: 'http://127.0.0.1:1234/v1',
    keyRequired: false,
    models: [],
    keyUrl: 'https://lmstudio.ai',
    note: 'No key. Start its local server, then Test lists the loaded models.',
  },
  {
    id: 'vllm',
    name: 'vLLM server',
    kind: 'local',
    provider: 'vllm',
    baseUrl: 'http://127.0.0.1:8000/v1',
    keyRequired: false,
    models: [],
    keyUrl: 'https://docs.vllm.ai',
    note: 'No key unless the server was started with one. Test lists the served model.',
  },
  {
    id: 'llamacpp',
    name: 'llama.cpp server',
    kind: 'local',
    provider: 'llamacpp',
    baseUrl: 'http://127.0.0.1:8080/v1',
    keyRequired: false,
    models: [],
    keyUrl: 'https://github.com/ggml-org/llama.cpp',
    note: 'No key unless the server was started with one. Test lists the loaded model.',
  },
];

export const presetById = (id: string): ProviderPreset | undefined => PROVIDER_PRESETS.find((p) => p.id === id);
