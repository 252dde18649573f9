// What the Sessions and Leases pages show: the live pins and leases with the names of their
// client keys, connections and combos resolved, plus the checks of the client keys' lease access.
import type { LeaseView, LeasesView, SessionPinView, SessionsView } from '../../../shared/model';
import type { ClientKeyAccess, ClientKeyService } from '../auth/clientKeys';
import type { ConnectionRegistry } from '../connections/registry';
import { badInput } from '../errors';
import type { SessionAffinity } from '../routing/affinity/sessionAffinity';
import type { ComboRegistry } from '../routing/combos/comboRegistry';
import type { LeaseBook } from '../routing/leases/leaseBook';
import { leaseFields } from '../routing/leases/leaseMachine';

export interface SessionViewDeps {
  affinity: SessionAffinity;
  leases: LeaseBook;
  clientKeys: ClientKeyService;
  registry: ConnectionRegistry;
  combos: ComboRegistry;
  ttlMs(): number;
}

export function sessionsView(d: SessionViewDeps, now: number): SessionsView {
  const sessions: SessionPinView[] = d.affinity
    .list(now)
    .reverse()
    .map((p) => ({
      id: p.id,
      session: p.session,
      source: p.source,
      clientKeyId: p.clientKeyId || null,
      clientKeyName: d.clientKeys.get(p.clientKeyId || null)?.name ?? null,
      comboId: p.scope || null,
      comboName: p.scope ? (d.combos.get(p.scope)?.name ?? null) : null,
      target: p.targetIndex,
      model: p.model,
      connectionId: p.connectionId,
      connectionName: d.registry.get(p.connectionId)?.name ?? null,
      createdAt: p.createdAt,
      pinnedAt: p.pinnedAt,
      lastUsedAt: p.lastUsedAt,
      expiresAt: p.expiresAt,
    }));
  return { now, ttlMs: d.ttlMs(), sessions };
}

export function leasesView(d: SessionViewDeps, now: number): LeasesView {
  const leases: LeaseView[] = d.leases.list(now).map((l) => ({
    ...leaseFields(l, d.registry.get(l.connectionId)),
    clientKeyId: l.clientKeyId,
    clientKeyName: d.clientKeys.get(l.clientKeyId)?.name ?? null,
  }));
  return { now, leases };
}

/** A key's lease pool may name only connections that exist (a 400 naming the entry otherwise). */
export function checkKeyAccess(registry: ConnectionRegistry, access: ClientKeyAccess, field = 'allowedConnections'): ClientKeyAccess {
  access.allowedConnections?.forEach((id, i) => {
    if (!registry.get(id)) throw badInput(`${field}.${i}`, `${field}.${i}: connection ${id} does not exist`);
  });
  return access;
}
