// Copy-paste setup for the agents people point at the proxy: Claude Code, Codex CLI, Gemini CLI,
// opencode, qwen-code, Crush, Continue, Cline, aider and any OpenAI (or Anthropic) SDK. Pure text
// builders: the page decides which key text goes in. The Claude Code, Codex, Gemini CLI, opencode
// and qwen-code files are the ones the agent conformance suite (tests/agents) runs the real CLIs with.

export interface AgentSetupInput {
  /** Proxy origin, e.g. http://127.0.0.1:8480 (no trailing slash, no /v1). */
  proxyUrl: string;
  /** The client key text to embed (the real key when copying; masked for display). */
  key: string;
  /** A model the proxy can route, used where a tool needs one. */
  openaiModel: string;
  anthropicModel: string;
  /** A model (typically a combo) Claude Code should ask for; unset keeps Claude Code's own choice. */
  claudeModel?: string;
  /** The model Gemini CLI should ask for; unset uses openaiModel. */
  geminiModel?: string;
}

export interface Snippet {
  title: string;
  /** Where this goes ("shell", "~/.codex/config.toml", ...). */
  where: string;
  code: string;
}

export interface AgentGuide {
  id: 'claude-code' | 'codex' | 'gemini-cli' | 'opencode' | 'qwen-code' | 'crush' | 'continue' | 'cline' | 'aider' | 'openai-sdk' | 'anthropic-sdk' | 'curl';
  label: string;
  intro: string;
  snippets: Snippet[];
}

const trimUrl = (u: string) => u.replace(/\/+$/, '');

export function agentGuides(i: AgentSetupInput): AgentGuide[] {
  const base = trimUrl(i.proxyUrl);
  const v1 = `${base}/v1`;
  return [
    {
      id: 'claude-code',
      label: 'Claude Code',
      intro:
        'Claude Code speaks the Anthropic Messages API. Point it at the proxy; requests go to your Anthropic-protocol connections.',
      snippets: [
        {
          title: 'For this shell',
          where: 'shell',
          code: `export ANTHROPIC_BASE_URL="${base}"\nexport ANTHROPIC_AUTH_TOKEN="${i.key}"\n${i.claudeModel ? `export ANTHROPIC_MODEL="${i.claudeModel}"\n` : ''}claude`,
        },
        {
          title: 'For every session',
          where: '~/.claude/settings.json',
          code: JSON.stringify(
            { env: { ANTHROPIC_BASE_URL: base, ANTHROPIC_AUTH_TOKEN: i.key, ...(i.claudeModel ? { ANTHROPIC_MODEL: i.claudeModel } : {}) } },
            null,
            2,
          ),
        },
      ],
    },
    {
      id: 'codex',
      label: 'Codex CLI',
      intro: 'Codex uses the OpenAI Responses API. Add Switchyard as a model provider and keep the key in an environment variable.',
      snippets: [
        {
          title: 'Provider',
          where: '~/.codex/config.toml',
          code: [
            'model_provider = "switchyard"',
            `model = "${i.openaiModel}"`,
            '',
            '[model_providers.switchyard]',
            'name = "Switchyard"',
            `base_url = "${v1}"`,
            'env_key = "SWITCHYARD_API_KEY"',
            'wire_api = "responses"',
          ].join('\n'),
        },
        { title: 'Key', where: 'shell', code: `export SWITCHYARD_API_KEY="${i.key}"\ncodex` },
      ],
    },
    {
      id: 'gemini-cli',
      label: 'Gemini CLI',
      intro:
        'Gemini CLI speaks the Gemini API. Point it at the proxy (without a path) and sign in with the client key as its API key; Switchyard translates for connections that speak another protocol.',
      snippets: [
        {
          title: 'Sign-in and privacy',
          where: '~/.gemini/settings.json',
          code: JSON.stringify(
            {
              security: { auth: { selectedType: 'gemini-api-key' } },
              model: { name: i.geminiModel ?? i.openaiModel },
              privacy: { usageStatisticsEnabled: false },
              telemetry: { enabled: false },
            },
            null,
            2,
          ),
        },
        { title: 'For this shell', where: 'shell', code: `export GOOGLE_GEMINI_BASE_URL="${base}"\nexport GEMINI_API_KEY="${i.key}"\ngemini` },
      ],
    },
    {
      id: 'opencode',
      label: 'opencode',
      intro: 'opencode reaches the proxy as an OpenAI-compatible provider (Chat Completions) and sends its session id with every request.',
      snippets: [
        {
          title: 'Provider',
          where: '~/.config/opencode/opencode.json',
          code: JSON.stringify(
            {
              $schema: 'https://opencode.ai/config.json',
              model: `switchyard/${i.openaiModel}`,
              provider: {
                switchyard: {
                  npm: '@ai-sdk/openai-compatible',
                  name: 'Switchyard',
                  options: { baseURL: v1, apiKey: i.key },
                  models: { [i.openaiModel]: { name: i.openaiModel } },
                },
              },
            },
            null,
            2,
          ),
        },
        { title: 'Run', where: 'shell', code: `opencode -m switchyard/${i.openaiModel}` },
      ],
    },
    {
      id: 'qwen-code',
      label: 'qwen-code',
      intro:
        'qwen-code reaches the proxy as an OpenAI-compatible provider. The custom header carries its session id, so each session stays on one connection.',
      snippets: [
        {
          title: 'Provider',
          where: '~/.qwen/settings.json',
          code: JSON.stringify(
            {
              security: { auth: { selectedType: 'openai' } },
              model: { name: i.openaiModel },
              modelProviders: {
                openai: [
                  {
                    id: i.openaiModel,
                    name: `${i.openaiModel} (Switchyard)`,
                    baseUrl: v1,
                    envKey: 'SWITCHYARD_API_KEY',
                    generationConfig: { customHeaders: { 'X-Session-Id': '${session_id}' } },
                  },
                ],
              },
              outboundCorrelation: { allowDynamicHeaderValues: true },
            },
            null,
            2,
          ),
        },
        { title: 'Key', where: 'shell', code: `export SWITCHYARD_API_KEY="${i.key}"\nqwen` },
      ],
    },
    {
      id: 'crush',
      label: 'Crush',
      intro: 'Crush takes the proxy as a custom OpenAI-compatible provider.',
      snippets: [
        {
          title: 'Provider',
          where: '~/.config/crush/crush.json',
          code: JSON.stringify(
            {
              $schema: 'https://charm.land/crush.json',
              providers: {
                switchyard: {
                  type: 'openai-compat',
                  name: 'Switchyard',
                  base_url: v1,
                  api_key: i.key,
                  models: [{ id: i.openaiModel, name: i.openaiModel, context_window: 128000, default_max_tokens: 8192 }],
                },
              },
              models: { large: { model: i.openaiModel, provider: 'switchyard' }, small: { model: i.openaiModel, provider: 'switchyard' } },
            },
            null,
            2,
          ),
        },
      ],
    },
    {
      id: 'continue',
      label: 'Continue',
      intro: 'Continue (VS Code, JetBrains) takes the proxy as an OpenAI provider with its own base URL.',
      snippets: [
        {
          title: 'Model',
          where: '~/.continue/config.yaml',
          code: [
            'name: Switchyard',
            'version: 1.0.0',
            'schema: v1',
            'models:',
            `  - name: ${i.openaiModel} (Switchyard)`,
            '    provider: openai',
            `    model: ${i.openaiModel}`,
            `    apiBase: ${v1}`,
            `    apiKey: ${i.key}`,
            '    roles:',
            '      - chat',
            '      - edit',
            '      - apply',
          ].join('\n'),
        },
      ],
    },
    {
      id: 'cline',
      label: 'Cline',
      intro: 'Cline is set up in its settings panel in VS Code: choose the OpenAI Compatible provider and fill in these fields.',
      snippets: [
        {
          title: 'Settings panel',
          where: 'Cline settings',
          code: ['API Provider: OpenAI Compatible', `Base URL: ${v1}`, `API Key: ${i.key}`, `Model ID: ${i.openaiModel}`].join('\n'),
        },
      ],
    },
    {
      id: 'aider',
      label: 'aider',
      intro: 'aider reaches the proxy as an OpenAI-compatible API; prefix the model with "openai/".',
      snippets: [
        {
          title: 'Environment',
          where: 'shell',
          code: `export OPENAI_API_BASE="${v1}"\nexport OPENAI_API_KEY="${i.key}"\naider --model openai/${i.openaiModel}`,
        },
        {
          title: 'Or as flags',
          where: 'shell',
          code: `aider --openai-api-base ${v1} --openai-api-key ${i.key} --model openai/${i.openaiModel}`,
        },
      ],
    },
    {
      id: 'openai-sdk',
      label: 'OpenAI SDK',
      intro: 'Any OpenAI client works: set the base URL to the proxy\'s /v1 and use the client key as the API key.',
      snippets: [
        { title: 'Environment (most tools)', where: 'shell', code: `export OPENAI_BASE_URL="${v1}"\nexport OPENAI_API_KEY="${i.key}"` },
        {
          title: 'Python',
          where: 'python',
          code: [
            'from openai import OpenAI',
            '',
            `client = OpenAI(base_url="${v1}", api_key="${i.key}")`,
            'reply = client.chat.completions.create(',
            `    model="${i.openaiModel}",`,
            '    messages=[{"role": "user", "content": "Hello"}],',
            ')',
            'print(reply.choices[0].message.content)',
          ].join('\n'),
        },
        {
          title: 'TypeScript',
          where: 'typescript',
          code: [
            "import OpenAI from 'openai';",
            '',
            `const client = new OpenAI({ baseURL: '${v1}', apiKey: '${i.key}' });`,
            'const reply = await client.chat.completions.create({',
            `  model: '${i.openaiModel}',`,
            "  messages: [{ role: 'user', content: 'Hello' }],",
            '});',
          ].join('\n'),
        },
      ],
    },
    {
      id: 'anthropic-sdk',
      label: 'Anthropic SDK',
      intro: 'The Anthropic SDKs take the proxy origin (without /v1) as the base URL.',
      snippets: [
        {
          title: 'Python',
          where: 'python',
          code: [
            'import anthropic',
            '',
            `client = anthropic.Anthropic(base_url="${base}", api_key="${i.key}")`,
            'reply = client.messages.create(',
            `    model="${i.anthropicModel}",`,
            '    max_tokens=1024,',
            '    messages=[{"role": "user", "content": "Hello"}],',
            ')',
          ].join('\n'),
        },
      ],
    },
    {
      id: 'curl',
      label: 'curl',
      intro: 'Check the proxy from a terminal.',
      snippets: [
        {
          title: 'Chat completion',
          where: 'shell',
          code: [
            `curl ${v1}/chat/completions \\`,
            `  -H "Authorization: Bearer ${i.key}" \\`,
            '  -H "content-type: application/json" \\',
            `  -d '{"model": "${i.openaiModel}", "messages": [{"role": "user", "content": "ping"}]}'`,
          ].join('\n'),
        },
        { title: 'Models the proxy routes', where: 'shell', code: `curl ${v1}/models -H "Authorization: Bearer ${i.key}"` },
      ],
    },
  ];
}
