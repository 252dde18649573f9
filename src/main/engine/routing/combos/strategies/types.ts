// The shape of a combo strategy: a pure ranking of the eligible candidates (combo targets expanded
// to connections) from signals read once per request. Strategies that rotate (round-robin,
// strict-random) get their combo's rotation state and return the next one; nothing else persists.
import type { AutoWeights } from '../../../../../shared/settings';
import type { Random } from '../../../random';
import type { LatencyStats } from '../../latencyTracker';
import type { Target } from '../../target';
import type { Price } from '../modelCatalog';
import type { QuotaReading } from '../quotaSignals';

export interface Candidate {
  target: Target;
  /** Index of the combo target this candidate expands. */
  entry: number;
  /** The combo target's weight (1-1000). */
  weight: number;
  /** Stable identity of the combo target (provider/model#connection), for hashing and memory. */
  key: string;
}

export interface RankSignals {
  now: number;
  random: Random;
  /** Requests in flight or waiting on a connection. */
  load(connectionId: string): number;
  /** The strictest concurrency cap of a connection; null when it has none. */
  capacity(connectionId: string): number | null;
  latency(connectionId: string): LatencyStats;
  /** p2c's latency weight (the p2cLatency.weight setting). */
  latencyWeight: number;
  quota(connectionId: string, model: string): QuotaReading | null;
  price(model: string): Price | null;
  contextWindow(model: string): number | null;
  /** Estimated tokens of this request: the prompt, and the output it asks for. */
  tokens: { input: number; output: number };
  /** A hash key of the prompt's stable prefix (system prompt and first message). */
  promptKey: string;
  /** Candidate key + connection id of the target that last served this combo. */
  lastGood: string | null;
  autoWeights: Required<AutoWeights>;
  /** reset-window: how soon a reset must come. */
  resetWindowMs: number;
}

export interface RotationState {
  /** Requests ranked so far (round-robin). */
  turn: number;
  /** Combo target indexes still to lead this cycle (strict-random). */
  deck: number[];
}

export interface Ranked {
  order: Candidate[];
  /** The combo's next rotation state, when the strategy rotates. */
  state?: RotationState;
}

export type Strategy = (candidates: readonly Candidate[], signals: RankSignals, state: RotationState) => Ranked;

/** The identity lkgp remembers: which combo target, on which connection. */
export const memoryKey = (c: Candidate) => `${c.key}@${c.target.conn.id}`;
