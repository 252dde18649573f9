// Unit-test set-up for session affinity: the real store in memory, a fake clock, targets over
// built connection records, and the slice of an inbound call that affinity reads.
import type { IncomingHttpHeaders } from 'node:http';
import type { InboundCall } from '../../../src/main/engine/proxy/inbound';
import type { Exclusion } from '../../../src/main/engine/resilience/port';
import { SessionAffinity } from '../../../src/main/engine/routing/affinity/sessionAffinity';
import type { RoutePlan } from '../../../src/main/engine/routing/plan';
import type { Target } from '../../../src/main/engine/routing/target';
import { openStore, type Db } from '../../../src/main/engine/store/db';
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';
import { SessionPinsRepo } from '../../../src/main/engine/store/sessionPinsRepo';
import { connectionRecord } from '../../support/builders';
import { FakeClock } from '../../support/fakeClock';

export const call = (headers: IncomingHttpHeaders, clientKeyId: string | null = 'key-1'): InboundCall =>
  ({ req: { headers }, json: {}, clientKeyId }) as unknown as InboundCall;

export const target = (conn: ConnectionRecord, model = 'm'): Target => ({ conn, model, requestedModel: model });

export const plan = (order: Target[], over: Partial<RoutePlan> = {}): RoutePlan => ({ order, disabled: [], hint: null, combo: null, ...over });

export interface AffinityRig {
  db: Db;
  clock: FakeClock;
  conns: ConnectionRecord[];
  excluded: Map<string, Exclusion>;
  ttl: { ms: number };
  affinity: SessionAffinity;
  /** A new SessionAffinity over the same database (a restart). */
  restart(): SessionAffinity;
  pinRows(): Record<string, unknown>[];
}

export function affinityRig(): AffinityRig {
  const clock = new FakeClock();
  const db = openStore({ path: ':memory:', now: () => clock.now() });
  const conns = [connectionRecord({ name: 'A' }), connectionRecord({ name: 'B' }), connectionRecord({ name: 'C' })];
  const excluded = new Map<string, Exclusion>();
  const ttl = { ms: 60_000 };
  const make = () =>
    new SessionAffinity({
      repo: new SessionPinsRepo(db),
      clock,
      ttlMs: () => ttl.ms,
      exclusion: (t) => excluded.get(t.conn.id) ?? null,
      connectionName: (id) => conns.find((c) => c.id === id)?.name ?? null,
    });
  return {
    db,
    clock,
    conns,
    excluded,
    ttl,
    affinity: make(),
    restart: make,
    pinRows: () => db.prepare('SELECT * FROM session_pins').all() as Record<string, unknown>[],
  };
}
