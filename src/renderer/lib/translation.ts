// Words for protocol translation: which agents a connection can serve and how (natively, through
// Chat Completions, or through translation), following the engine's routing rule that a
// connection of the other protocol serves the models it lists or `provider/model`, never any
// bare model; and the request log's translated attempts in plain names.
import type { ConnectionView } from '../../shared/model';

export interface AgentReach {
  agent: 'Claude Code' | 'Codex CLI' | 'Chat clients';
  /** What the agent speaks, for a tooltip. */
  protocol: string;
  how: 'native' | 'via Chat' | 'via translation';
  /** How the agent names a model here when it is not this connection's own protocol. */
  note: string | null;
}

type Reachable = Pick<ConnectionView, 'protocol' | 'servesResponses' | 'models' | 'provider'>;

export function agentReach(c: Reachable): AgentReach[] {
  const anthropic = c.protocol === 'anthropic';
  const crossNote = c.models.length > 0 ? `its listed models or ${c.provider}/<model>` : `as ${c.provider}/<model>`;
  return [
    { agent: 'Claude Code', protocol: 'Anthropic Messages', how: anthropic ? 'native' : 'via translation', note: anthropic ? null : crossNote },
    {
      agent: 'Codex CLI',
      protocol: 'OpenAI Responses',
      how: anthropic ? 'via translation' : c.servesResponses ? 'native' : 'via Chat',
      note: anthropic ? crossNote : null,
    },
    { agent: 'Chat clients', protocol: 'OpenAI Chat Completions', how: anthropic ? 'via translation' : 'native', note: anthropic ? crossNote : null },
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
};

/** `anthropic-messages→openai-chat` → `Anthropic Messages → Chat Completions`. */
export function translationLabel(translated: string): string {
  const [from, to] = translated.split('→');
  return `${SHAPE_NAMES[from ?? ''] ?? from} → ${SHAPE_NAMES[to ?? ''] ?? to}`;
}
