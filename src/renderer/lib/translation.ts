// Words for protocol translation: which agents a connection can serve and how (natively, through
// Chat Completions, or through translation), following the engine's routing rule that a
// connection of another protocol (Anthropic, OpenAI, Gemini) serves the models it lists or
// `provider/model`, never any bare model; and the request log's translated attempts in plain names.
import type { ConnectionView } from '../../shared/model';

export interface AgentReach {
  agent: 'Claude Code' | 'Codex CLI' | 'Chat clients' | 'Gemini CLI';
  /** What the agent speaks, for a tooltip. */
  protocol: string;
  how: 'native' | 'via Chat' | 'via translation';
  /** How the agent names a model here when it is not this connection's own protocol. */
  note: string | null;
}

type Reachable = Pick<ConnectionView, 'protocol' | 'servesResponses' | 'models' | 'provider'>;

export function agentReach(c: Reachable): AgentReach[] {
  const crossNote = c.models.length > 0 ? `its listed models or ${c.provider}/<model>` : `as ${c.provider}/<model>`;
  /** An agent of another protocol reaches this connection through translation, by the names in crossNote. */
  const reach = (agent: AgentReach['agent'], protocol: string, own: boolean, how: AgentReach['how'] = 'native'): AgentReach =>
    own ? { agent, protocol, how, note: null } : { agent, protocol, how: 'via translation', note: crossNote };
  const openai = c.protocol === 'openai';
  return [
    reach('Claude Code', 'Anthropic Messages', c.protocol === 'anthropic'),
    // The Responses API is the OpenAI protocol too: an OpenAI server without /responses gets it as Chat.
    reach('Codex CLI', 'OpenAI Responses', openai, c.servesResponses ? 'native' : 'via Chat'),
    reach('Chat clients', 'OpenAI Chat Completions', openai),
    reach('Gemini CLI', 'Gemini API', c.protocol === 'gemini'),
  ];
}

/** One line for the connection card: "Claude Code native · Codex CLI via Chat · …". */
export function agentReachText(c: Reachable): string {
  return agentReach(c)
    .map((r) => `${r.agent} ${r.how}${r.note ? ` (${r.note})` : ''}`)
    .join(' · ');
}

const SHAPE_NAMES: Record<string, string> = {
  'anthropic-messages': 'Anthropic Messages',
  'openai-chat': 'Chat Completions',
  'openai-responses': 'Responses',
  gemini: 'Gemini',
};

/** `anthropic-messages→openai-chat` → `Anthropic Messages → Chat Completions`. */
export function translationLabel(translated: string): string {
  const [from, to] = translated.split('→');
  return `${SHAPE_NAMES[from ?? ''] ?? from} → ${SHAPE_NAMES[to ?? ''] ?? to}`;
}
