// The CLI agents whose own configuration file Switchyard can write ("Apply") and put back
// ("Restore") from the Connect your agent page, and what the page shows about it.

export const AGENT_CONFIG_AGENTS = ['claude-code', 'codex', 'opencode'] as const;
export type AgentConfigId = (typeof AGENT_CONFIG_AGENTS)[number];

export interface AgentConfigStatus {
  agent: AgentConfigId;
  /** The agent's configuration file on this machine. */
  file: string;
  /** Whether Switchyard's keys are in it (written by Apply, not yet restored). */
  applied: boolean;
  appliedAt: number | null;
  /** The copy of the file as it was before the first Apply (null when there was no file). */
  backup: string | null;
  /** The keys Switchyard wrote (dotted paths, or [table] names). */
  keys: string[];
}
