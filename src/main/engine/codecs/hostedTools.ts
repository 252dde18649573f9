// Tools the provider runs on its own servers (OpenAI's web_search, file_search, code_interpreter,
// computer use, image_generation, MCP, local_shell; Anthropic's web_search_*, web_fetch_*,
// code_execution_*, tool search, MCP toolsets) cannot run on a target of another protocol. They are
// left out of the translated request, each noted in the request log and named in the answer's
// `x-switchyard-dropped-tools` header, so an agent that sends them by default (Codex CLI) still
// works with its own tools. The request is refused only when every tool it offered would be left
// out: then the target could do nothing the client asked tools for.
import { untranslatable } from './codecError';
import type { IrRequest } from './ir';
import { note } from './read';

/** Anthropic tool types the Anthropic API runs itself (a version suffix follows the prefix). */
const ANTHROPIC_SERVER_TOOLS = ['web_search_', 'web_fetch_', 'code_execution_', 'tool_search_tool_', 'mcp_toolset'];

export function isAnthropicServerTool(type: string): boolean {
  return ANTHROPIC_SERVER_TOOLS.some((p) => type === p || type.startsWith(p));
}

/** Leaves a hosted tool out of the translated request, noted for the request log and the header. */
export function dropHostedTool(ir: IrRequest, path: string, type: string, provider: 'OpenAI' | 'Anthropic' | 'Google'): void {
  if (!ir.droppedTools.includes(type)) ir.droppedTools.push(type);
  note(ir.dropped, path, `the "${type}" tool runs only on ${provider}; left out for this target`);
}

/** After the tools are read: refused when tools were offered and every one of them was left out. */
export function checkToolsLeft(ir: IrRequest, provider: 'OpenAI' | 'Anthropic' | 'Google'): void {
  if (ir.droppedTools.length > 0 && ir.tools.length === 0) {
    throw untranslatable('tools', `every tool in this request (${ir.droppedTools.join(', ')}) runs only on ${provider}; the target could use none of them`);
  }
}

/** The response header naming the tools left out, or nothing. */
export const DROPPED_TOOLS_HEADER = 'x-switchyard-dropped-tools';
