// Test doubles for admission unit tests: connection records, a settings holder whose values a test
// can change, a registry, and pacers the test drives (no Bottleneck, no real time).
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';
import { connectionRecord } from '../../support/builders';
import { resolveSettings, type ResolvedSettings } from '../../../src/main/engine/settings/resolve';
import type { SettingKey } from '../../../src/shared/settings';
import type { Pacer, PacerFactory } from '../../../src/main/engine/admission/pacer';
import type { Target } from '../../../src/main/engine/routing/target';

/** An OAuth connection (so unprotected unless a test says otherwise). */
export function conn(over: Partial<ConnectionRecord> = {}): ConnectionRecord {
  return connectionRecord({ authClass: 'oauth', secretMasked: 'sk-…abcd', createdAt: 0, updatedAt: 0, ...over });
}

export const target = (c: ConnectionRecord, model = 'model-a'): Target => ({ conn: c, model, requestedModel: model });

export class TestSettings {
  snapshot: ResolvedSettings;
  private listeners = new Set<(changed: SettingKey[]) => void>();

  constructor(persisted: Partial<Record<SettingKey, unknown>> = {}, env: Record<string, string> = {}) {
    this.snapshot = resolveSettings(env, persisted);
  }

  get values() {
    return this.snapshot.values;
  }

  set(persisted: Partial<Record<SettingKey, unknown>>): void {
    const before = this.snapshot.values;
    this.snapshot = resolveSettings({}, { ...this.snapshot.persisted, ...persisted });
    const changed = (Object.keys(persisted) as SettingKey[]).filter((k) => before[k] !== this.snapshot.values[k]);
    for (const fn of this.listeners) fn(changed);
  }

  onChange(fn: (changed: SettingKey[]) => void) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

export class TestRegistry {
  private byId = new Map<string, ConnectionRecord>();
  private listeners = new Set<(kind: 'config' | 'health', ids: string[]) => void>();

  constructor(...conns: ConnectionRecord[]) {
    for (const c of conns) this.byId.set(c.id, c);
  }

  all() {
    return [...this.byId.values()];
  }

  get(id: string) {
    return this.byId.get(id);
  }

  /** Replaces a record (as the real registry does on an edit) and announces it. */
  update(c: ConnectionRecord): ConnectionRecord {
    this.byId.set(c.id, c);
    for (const fn of this.listeners) fn('config', [c.id]);
    return c;
  }

  onChange(fn: (kind: 'config' | 'health', ids: string[]) => void) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

/** A pacer whose permits the test hands out one by one; records the spacing it was asked for. */
export class ManualPacer implements Pacer {
  jobs: (() => void)[] = [];
  minTime: number;
  closed = false;

  constructor(minTime: number) {
    this.minTime = minTime;
  }

  setMinTime(ms: number) {
    this.minTime = ms;
  }

  submit(permit: () => void) {
    this.jobs.push(permit);
  }

  /** Gives the next permit; false when none is pending. */
  next(): boolean {
    const job = this.jobs.shift();
    job?.();
    return job !== undefined;
  }

  /** Gives permits until none is pending. */
  drain(): number {
    let n = 0;
    while (this.next()) n++;
    return n;
  }

  async close() {
    this.closed = true;
  }
}

/** A factory that remembers the pacers it made. */
export function manualPacers(): PacerFactory & { made: ManualPacer[]; drainAll(): number } {
  const made: ManualPacer[] = [];
  const factory: PacerFactory = (minTime) => {
    const p = new ManualPacer(minTime);
    made.push(p);
    return p;
  };
  return Object.assign(factory, { made, drainAll: () => made.reduce((n, p) => n + p.drain(), 0) });
}

/** Lets pending promise callbacks run (no time passes). */
export const flush = async (rounds = 5) => {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
};

/** Captures how a promise settled, without awaiting it. */
export function track<T>(p: Promise<T>) {
  const s: { status: 'pending' | 'resolved' | 'rejected'; value?: T; error?: any } = { status: 'pending' };
  p.then(
    (v) => {
      s.status = 'resolved';
      s.value = v;
    },
    (e) => {
      s.status = 'rejected';
      s.error = e;
    },
  );
  return s;
}
