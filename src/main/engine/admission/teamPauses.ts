// Team mode (issue 26): a request queue's pause, set from an upstream's retry hint on one instance,
// holds the team's queue for that connection (or that model). Pauses travel as records of a shared
// table keyed by the connection's team id, the queue ('' for the connection's own, else the model of
// a model-scoped queue) and the model a model-only pause holds. The latest deadline wins: a queue
// keeps the later of its own pause and one it receives, and publishes the later of the two; an
// operator's resume publishes the record's deletion. Records expire in Redis when their pause ends.
import type { Clock } from '../clock';
import type { SharedTable, Team } from '../team';

export interface PauseRecord {
  /** The queue: '' for the connection's own, else the model of a model-scoped queue. */
  queue: string;
  /** The one model this pause holds in a connection-wide queue (null: the whole queue). */
  model: string | null;
  /** The pause's end (epoch ms). */
  until: number;
}

export interface PauseKey {
  teamId: string;
  queue: string;
  model: string | null;
}

export const PAUSES_TABLE = 'queuePauses';

/** The record's key: its parts, each URI-encoded, joined by ':' (so a model id may hold any character). */
export function pauseKey(k: PauseKey): string {
  return [k.teamId, k.queue, k.model ?? ''].map(encodeURIComponent).join(':');
}

export function parsePauseKey(key: string): PauseKey | null {
  const parts = key.split(':');
  if (parts.length !== 3) return null;
  try {
    const [teamId, queue, model] = parts.map(decodeURIComponent) as [string, string, string];
    return teamId ? { teamId, queue, model: model === '' ? null : model } : null;
  } catch {
    return null;
  }
}

/** What another instance published: a pause to apply (until) or one to lift (null). */
export type ApplyPause = (key: PauseKey, until: number | null) => void;

export class TeamPauses {
  private readonly table: SharedTable<PauseRecord>;

  constructor(
    team: Pick<Team, 'table'>,
    private readonly clock: Clock,
    apply: ApplyPause,
  ) {
    this.table = team.table<PauseRecord>(PAUSES_TABLE, (key, value) => {
      const k = parsePauseKey(key);
      if (!k) return;
      if (value === null) return apply(k, null);
      if (typeof value.until === 'number' && Number.isFinite(value.until)) apply(k, value.until);
    });
  }

  /** This instance paused a queue until `until` (already the later of its pauses). */
  publish(k: PauseKey, until: number): void {
    const ttl = until - this.clock.now();
    if (ttl <= 0) return;
    this.table.publish(pauseKey(k), { queue: k.queue, model: k.model, until }, ttl);
  }

  /** This instance lifted a pause (an operator's resume): the team lifts it too. */
  lift(k: PauseKey): void {
    this.table.publish(pauseKey(k), null);
  }
}
