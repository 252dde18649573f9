// The concurrency caps a connection declares, turned into gate stages (SPEC R-SQ-01..11).
// rateLimitOverrides.maxConcurrent is the strict connection-wide cap (account stage);
// rateLimitOverrides.modelConcurrency caps one exact upstream model id (model stage);
// provider_connections.max_concurrent is the account's real concurrency and drives only the
// fail-open shared-quota serialisation. Anything that is not a positive integer is no cap.
import type { ConnectionRecord } from '../store/connectionsRepo';
import type { GateStage } from './compositeGate';

const NO_STAGES: readonly GateStage[] = Object.freeze([]);

/** A cap value as configured: a positive integer, else null (no cap). */
export function capOf(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null;
}

export const accountKey = (connectionId: string) => `acct:${connectionId}`;
export const modelKey = (connectionId: string, model: string) => `model:${connectionId}:${model}`;
export const quotaShareKey = (connectionId: string) => `qsconn:${connectionId}`;

/** The per-model cap for the exact model id sent upstream (no alias or prefix matching, R-SQ-05). */
export function modelCapOf(conn: Pick<ConnectionRecord, 'rateLimitOverrides'>, model: string): number | null {
  const map = conn.rateLimitOverrides?.modelConcurrency;
  if (!map || !Object.prototype.hasOwnProperty.call(map, model)) return null;
  return capOf(map[model]);
}

/** The strict gate stages for one request, in acquisition order (account, then model). */
export function gateStagesFor(conn: Pick<ConnectionRecord, 'id' | 'rateLimitOverrides'>, model: string): readonly GateStage[] {
  const account = capOf(conn.rateLimitOverrides?.maxConcurrent);
  const perModel = modelCapOf(conn, model);
  if (account === null && perModel === null) return NO_STAGES;
  const stages: GateStage[] = [];
  if (account !== null) stages.push({ kind: 'account', key: accountKey(conn.id), cap: account, label: 'connection' });
  if (perModel !== null) stages.push({ kind: 'model', key: modelKey(conn.id, model), cap: perModel, label: `model ${model}` });
  return stages;
}

/** The shared-quota serialisation cap, when that layer applies to this connection (R-SQ-12, R-SQ-14). */
export function quotaShareCapOf(conn: Pick<ConnectionRecord, 'maxConcurrent'>, enabled: boolean): number | null {
  return enabled ? capOf(conn.maxConcurrent) : null;
}
