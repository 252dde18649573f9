// The request shape Codex CLI 0.171.0 sends by default to a Responses endpoint: its own function
// tools, the `multi_agent_v1` namespace with five function tools, and the hosted web search;
// the session in the `session-id` / `thread-id` headers and in the body's `prompt_cache_key` and
// `client_metadata.session_id`. Schemas are trimmed to what the tests need.

const obj = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required, additionalProperties: false });
const str = { type: 'string' };

const fn = (name: string, description: string, parameters: Record<string, unknown>) => ({ type: 'function' as const, name, description, strict: false, parameters });

/** Codex's default `tools`, in its order. */
export const CODEX_DEFAULT_TOOLS = [
  fn('exec_command', 'Runs a command in a PTY.', obj({ cmd: str, workdir: str, yield_time_ms: { type: 'number' } }, ['cmd'])),
  fn('write_stdin', 'Writes characters to an existing exec session.', obj({ session_id: { type: 'number' }, chars: str }, ['session_id'])),
  fn('update_plan', 'Updates the task plan.', obj({ explanation: str, plan: { type: 'array', items: obj({ step: str, status: str }, ['step', 'status']) } }, ['plan'])),
  fn('view_image', 'Attach a local image to the conversation.', obj({ path: str }, ['path'])),
  {
    type: 'namespace' as const,
    name: 'multi_agent_v1',
    description: 'Tools for working with sub-agents.',
    tools: [
      fn('spawn_agent', 'Spawn a sub-agent for a well-scoped task.', obj({ message: str, agent_type: str }, ['message'])),
      fn('send_input', 'Send a message to an existing agent.', obj({ id: str, message: str }, ['id', 'message'])),
      fn('resume_agent', 'Resume a previously closed agent.', obj({ id: str }, ['id'])),
      fn('wait_agent', 'Wait for agents to reach a final status.', obj({ ids: { type: 'array', items: str }, timeout_ms: { type: 'number' } }, ['ids'])),
      fn('close_agent', 'Close an agent when it is no longer needed.', obj({ id: str }, ['id'])),
    ],
  },
  { type: 'web_search' as const, external_web_access: true },
];

/** A Codex turn's body (stream or not) for `model`, with `input` items and the session id in the body. */
export function codexBody(model: string, input: unknown[], session: string, stream: boolean): Record<string, unknown> {
  return {
    model,
    instructions: 'You are Codex, a coding agent.',
    input,
    tools: CODEX_DEFAULT_TOOLS,
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: session,
    client_metadata: { session_id: session },
  };
}

/** The session headers Codex sends with every turn. */
export const codexHeaders = (session: string): Record<string, string> => ({ 'session-id': session, 'thread-id': session, originator: 'codex_exec' });
