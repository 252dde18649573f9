// Test doubles for team-mode admission: clustered limiters held in memory (a semaphore per id, shared
// by every "instance" that uses the same FakeLimiters), whose Redis can be made to stop answering,
// fail or go away; a team whose shared tables record what is published; and team ids.
import type { ClusterJobStatus, ClusterLimiter, ClusterLimiters, LimiterSettings, LimiterWatch } from '../../../src/main/engine/admission/teamLimiters';
import type { ApplyFn } from '../../../src/main/engine/team/replicator';
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';

interface Job {
  id: string;
  task: () => Promise<void>;
  resolve: (v: unknown) => void;
}

export class FakeLimiter implements ClusterLimiter {
  settings: LimiterSettings;
  /** Every settings write (the creation's included). */
  readonly writes: LimiterSettings[] = [];
  readonly expirations: number[] = [];
  readonly watchers = new Set<LimiterWatch>();
  private readonly status = new Map<string, ClusterJobStatus>();
  private readonly queue: Job[] = [];
  running = 0;
  /** Jobs scheduled so far. */
  scheduled = 0;

  constructor(
    readonly id: string,
    settings: LimiterSettings,
    private readonly owner: FakeLimiters,
  ) {
    this.settings = { ...settings };
    this.writes.push({ ...settings });
  }

  schedule(job: { id: string; expiration: number }, task: () => Promise<void>): Promise<unknown> {
    this.scheduled++;
    this.expirations.push(job.expiration);
    this.status.set(job.id, 'RECEIVED');
    return new Promise((resolve) => {
      const j: Job = { id: job.id, task, resolve };
      // Redis does not answer: the job stays received.
      if (this.owner.mode === 'hang') return this.owner.hung.push(() => this.enqueue(j));
      this.enqueue(j);
    });
  }

  private enqueue(j: Job): void {
    this.status.set(j.id, 'QUEUED');
    this.queue.push(j);
    this.drain();
  }

  jobStatus(jobId: string): ClusterJobStatus {
    return this.status.get(jobId) ?? null;
  }

  configure(s: LimiterSettings): void {
    if (s.maxConcurrent === this.settings.maxConcurrent && s.minTime === this.settings.minTime) return;
    this.settings = { ...s };
    this.writes.push({ ...s });
    this.drain();
  }

  watch(w: LimiterWatch): () => void {
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }

  /** A Redis call of this limiter failed. */
  fail(err = new Error('connection reset')): void {
    this.owner.failed(err);
    for (const w of [...this.watchers]) w.error?.(err);
  }

  get waiting(): number {
    return this.queue.length;
  }

  private drain(): void {
    const cap = this.settings.maxConcurrent;
    while (this.queue.length > 0 && (cap === null || this.running < cap)) {
      const j = this.queue.shift()!;
      this.running++;
      this.status.set(j.id, 'EXECUTING');
      void j.task().then(() => {
        this.running--;
        this.status.set(j.id, 'DONE');
        j.resolve(undefined);
        this.drain();
      });
    }
    if (this.queue.length > 0) for (const w of [...this.watchers]) w.noRoom?.();
  }
}

/** Clustered limiters in memory; one instance stands for the team's Redis. */
export class FakeLimiters implements ClusterLimiters {
  up = true;
  boundMs = 1_000;
  mode: 'answer' | 'hang' = 'answer';
  /** Jobs Redis never answered (released by `answerLate`). */
  hung: (() => void)[] = [];
  readonly made = new Map<string, FakeLimiter>();
  readonly failures: unknown[] = [];
  private readonly downFns = new Set<() => void>();

  limiter(id: string, settings: LimiterSettings): FakeLimiter {
    let l = this.made.get(id);
    if (!l) this.made.set(id, (l = new FakeLimiter(id, settings, this)));
    return l;
  }

  existing(id: string): FakeLimiter | undefined {
    return this.made.get(id);
  }

  ids(): Iterable<string> {
    return this.made.keys();
  }

  failed(err: unknown): void {
    this.failures.push(err);
  }

  onDown(fn: () => void): () => void {
    this.downFns.add(fn);
    return () => this.downFns.delete(fn);
  }

  /** The link leaves 'connected'. */
  goDown(): void {
    this.up = false;
    for (const fn of [...this.downFns]) fn();
  }

  /** Redis answers the calls it left hanging. */
  answerLate(): void {
    this.mode = 'answer';
    for (const fn of this.hung.splice(0)) fn();
  }

  async close(): Promise<void> {}
}

export interface Published {
  table: string;
  key: string;
  value: unknown;
  ttlMs: number | null | undefined;
}

/** A team whose shared tables record what is published and let a test deliver records from "another instance". */
export class FakeTeam {
  readonly enabled = true;
  readonly link = null;
  readonly prefix = 'sy:test:';
  readonly published: Published[] = [];
  private readonly applies = new Map<string, ApplyFn<unknown>>();

  constructor(readonly instanceId = 'instance-a') {}

  table<V>(name: string, apply: ApplyFn<V>) {
    this.applies.set(name, apply as ApplyFn<unknown>);
    return { name, publish: (key: string, value: V | null, ttlMs?: number | null) => void this.published.push({ table: name, key, value, ttlMs }) };
  }

  /** A record another instance published. */
  deliver(table: string, key: string, value: unknown, from = 'instance-b'): void {
    this.applies.get(table)!(key, value, from);
  }
}

/** Team ids: every connection is shared under `c_<its id>` unless listed as local-only. */
export function teamIds(registry: { all(): readonly ConnectionRecord[] }, localOnly: string[] = []) {
  return {
    of: (c: ConnectionRecord) => (localOnly.includes(c.id) ? null : `c_${c.id}`),
    localIds: (teamId: string) => registry.all().filter((c) => `c_${c.id}` === teamId && !localOnly.includes(c.id)).map((c) => c.id),
  };
}
