// Team mode's views (issue 26): the team settings as the dashboard shows them (secrets masked, each
// value with where it comes from), the link's status, configuration sharing (who publishes, what
// this instance applied) and what is managed by the team here. Plain data, no I/O.

/** What this instance does with the team's configuration. */
export const TEAM_ROLES = ['off', 'publish', 'follow'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

/** Where a team setting's value comes from: the command line, the environment, saved here, or none given. */
export type TeamValueSource = 'cli' | 'env' | 'saved' | 'default';

export interface TeamValueView<T> {
  /** The value this run uses (an address with its password hidden). */
  value: T;
  source: TeamValueSource;
  /** The command-line flag or environment variable that sets it (null: saved or default). */
  setBy: string | null;
  /** The value saved here (masked like `value`), whether or not it is the one in force. */
  saved: T | null;
}

export interface TeamKeyView {
  set: boolean;
  source: TeamValueSource;
  setBy: string | null;
  /** The key's last characters, e.g. "…k3Q=" (never the key). */
  masked: string | null;
  /** A short fingerprint to compare keys between workstations without showing them. */
  fingerprint: string | null;
}

export interface TeamSettingsView {
  /** The Redis address (null: team mode is off). */
  address: TeamValueView<string | null>;
  /** The team's name within that Redis. */
  team: TeamValueView<string>;
  key: TeamKeyView;
  role: TeamValueView<TeamRole>;
  /** How this instance is named to the team (the publisher's name on followers' pages). */
  displayName: TeamValueView<string>;
  /** In words, when saved values differ from what this run uses and only a restart applies them. */
  restartNeeded: string | null;
}

export type TeamLinkStateView = 'off' | 'connecting' | 'connected' | 'degraded' | 'closed';

export interface TeamStatusView {
  state: TeamLinkStateView;
  /** When the link entered this state. */
  since: number | null;
  /** Why it is degraded, in words. */
  reason: string | null;
  /** Shared changes made here that wait for Redis. */
  pendingWrites: number;
}

export interface TeamPublisherView {
  /** The publishing instance's display name. */
  name: string;
  instanceId: string;
  /** Counts the publisher's publications. */
  revision: number;
  publishedAt: number;
}

export type TeamConfigState =
  /** Role off, or team mode off: nothing shared. */
  | 'off'
  /** Publishing: the last publication is in Redis (or waits for it). */
  | 'published'
  /** Following, and nothing was published yet (or it has not arrived). */
  | 'waiting'
  /** Following: the publisher's configuration is applied here. */
  | 'following'
  /** Following, but the last publication could not be applied (the last good one stays). */
  | 'failed';

export interface TeamConfigView {
  state: TeamConfigState;
  /** In words: what happened, or why it failed and what to do. */
  message: string | null;
  /** The last publication seen (or made here). */
  publisher: TeamPublisherView | null;
  /** When this follower last applied a publication. */
  appliedAt: number | null;
  /** The applied publication's revision. */
  appliedRevision: number | null;
}

/** What the team manages on this instance (read-only here). */
export interface TeamManagedView {
  /** The publisher's name, for "Managed by team (published by …)". */
  owner: string | null;
  connections: string[];
  combos: string[];
  mappings: string[];
  /** Setting keys. */
  settings: string[];
}

export interface TeamView {
  /** Team mode is on for this run (a Redis address is in force). */
  enabled: boolean;
  instanceId: string;
  status: TeamStatusView;
  settings: TeamSettingsView;
  config: TeamConfigView;
  managed: TeamManagedView;
}

/** The words for a link state, shown as a badge. */
export const TEAM_STATE_WORDS: Record<TeamLinkStateView, string> = {
  off: 'Off',
  connecting: 'Connecting',
  connected: 'Connected',
  degraded: 'Degraded',
  closed: 'Stopped',
};

export const TEAM_ROLE_WORDS: Record<TeamRole, { label: string; help: string }> = {
  off: {
    label: 'Not shared',
    help: "This instance keeps its own connections, combos and settings. It still shares cooldowns, breakers, limits and leases with the team.",
  },
  publish: {
    label: 'Publish',
    help: "This instance owns the team's configuration: its connections (keys encrypted with the team key), combos, model mappings, error rules and settings are published, and every change is published again.",
  },
  follow: {
    label: 'Follow',
    help: "This instance uses the configuration the team's publisher published. What came from the team is read-only here; your client keys, request log and your own additions stay yours.",
  },
};
