// Outlier ejection: the pure transitions and the detector's book, on the fake clock.
import { describe, expect, it } from 'vitest';
import {
  CLEAN_OUTLIER,
  ejectedHealth,
  ejectionMs,
  ejectionsAt,
  onOutlierFailure,
  onOutlierSuccess,
  onSiblingSuccess,
  OutlierDetector,
  type OutlierRecord,
  type OutlierSettings,
} from '../../../src/main/engine/resilience/outlierEjection';
import type { ConnectionHealthState } from '../../../src/main/engine/store/connectionsRepo';
import { FakeClock } from '../../support/fakeClock';

const S: OutlierSettings = { enabled: true, consecutiveFailures: 2, baseEjectionMs: 10_000, maxEjectionMs: 300_000, siblingWindowMs: 60_000 };

describe('outlier ejection: transitions', () => {
  it('ejects on the N-th consecutive failure while a sibling succeeds, for the base time', () => {
    const clock = new FakeClock();
    const one = onOutlierFailure(CLEAN_OUTLIER, clock.now(), true, S);
    expect(one.ejectMs).toBeNull();
    const two = onOutlierFailure(one.record, clock.now(), true, S);
    expect(two.ejectMs).toBe(10_000);
    expect(two.record).toMatchObject({ consecutive: 2, ejections: 1, ejectedUntil: clock.now() + 10_000 });
  });

  it('never ejects without a succeeding sibling, however long the streak', () => {
    let r: OutlierRecord = CLEAN_OUTLIER;
    for (let i = 0; i < 50; i++) {
      const out = onOutlierFailure(r, i, false, S);
      expect(out.ejectMs).toBeNull();
      r = out.record;
    }
    expect(r.consecutive).toBe(50);
  });

  it('a success resets the streak (and ends a running ejection); the ejection count stays for the next one', () => {
    const r = onOutlierFailure(onOutlierFailure(CLEAN_OUTLIER, 0, true, S).record, 0, true, S).record;
    const ok = onOutlierSuccess(r, 1_000);
    expect(ok).toMatchObject({ consecutive: 0, ejections: 1, ejectedUntil: 1_000 });
    expect(onOutlierSuccess(CLEAN_OUTLIER, 5)).toBe(CLEAN_OUTLIER);
  });

  it('failures while ejected (attempts already in flight) extend nothing', () => {
    const r = onOutlierFailure(onOutlierFailure(CLEAN_OUTLIER, 0, true, S).record, 0, true, S).record;
    const late = onOutlierFailure(r, 5_000, true, S);
    expect(late.ejectMs).toBeNull();
    expect(late.record).toMatchObject({ ejectedUntil: 10_000, ejections: 1, consecutive: 3 });
  });

  it('a key that stays bad is ejected again by its first failure after the ejection, each time longer: base × n, capped', () => {
    const clock = new FakeClock();
    let r = onOutlierFailure(onOutlierFailure(CLEAN_OUTLIER, clock.now(), true, S).record, clock.now(), true, S).record;
    const lengths = [r.ejectedUntil! - clock.now()];
    for (let i = 0; i < 40; i++) {
      clock.advance(r.ejectedUntil! - clock.now());
      const out = onOutlierFailure(r, clock.now(), true, S);
      lengths.push(out.ejectMs!);
      r = out.record;
    }
    expect(lengths.slice(0, 4)).toEqual([10_000, 20_000, 30_000, 40_000]);
    expect(Math.max(...lengths)).toBe(300_000);
    expect(lengths.at(-1)).toBe(300_000);
  });

  it('the ejection count is forgiven one step per base time without an ejection', () => {
    const r: OutlierRecord = { consecutive: 0, lastFailureAt: 0, ejections: 3, ejectedUntil: 100_000 };
    expect(ejectionsAt(r, 100_000, S)).toBe(3);
    expect(ejectionsAt(r, 109_999, S)).toBe(3);
    expect(ejectionsAt(r, 110_000, S)).toBe(2);
    expect(ejectionsAt(r, 200_000, S)).toBe(0);
    expect(ejectionMs(1, { baseEjectionMs: 10_000, maxEjectionMs: 5_000 })).toBe(10_000);
  });

  it('a sibling’s success ejects a connection whose recent streak reached N; an old streak is left alone', () => {
    const r: OutlierRecord = { consecutive: 2, lastFailureAt: 1_000, ejections: 0, ejectedUntil: null };
    expect(onSiblingSuccess(r, 2_000, S)).toMatchObject({ ejectMs: 10_000, record: { ejectedUntil: 12_000 } });
    expect(onSiblingSuccess(r, 61_000, S).ejectMs).toBeNull();
    expect(onSiblingSuccess({ ...r, consecutive: 1 }, 2_000, S).ejectMs).toBeNull();
  });

  it('a sibling\'s success does not eject again on a streak an ejection already answered: the key gets its next call first', () => {
    const clock = new FakeClock();
    let r = onOutlierFailure(CLEAN_OUTLIER, clock.now(), true, S).record;
    const first = onOutlierFailure(r, clock.now(), true, S);
    expect(first.ejectMs).toBe(S.baseEjectionMs);
    r = first.record;
    clock.advance(S.baseEjectionMs);
    expect(onSiblingSuccess(r, clock.now(), S).ejectMs).toBeNull(); // no failure since the ejection ended
    // A failure after the ejection ended is new evidence: it ejects again (the stays-bad rule).
    expect(onOutlierFailure(r, clock.now() + 1, true, S).ejectMs).not.toBeNull();
  });

  it('switched off, nothing is ejected', () => {
    const off = { ...S, enabled: false };
    const r = onOutlierFailure(onOutlierFailure(CLEAN_OUTLIER, 0, true, off).record, 0, true, off);
    expect(r.ejectMs).toBeNull();
    expect(onSiblingSuccess(r.record, 1, off).ejectMs).toBeNull();
  });

  it('writes a cooldown with reason outlier_ejected to the health, never over a terminal state', () => {
    const h: ConnectionHealthState = {
      testStatus: 'active',
      rateLimitedUntil: null,
      backoffLevel: 2,
      lastError: 'service unavailable',
      lastErrorType: 'server_error',
      errorCode: '503',
      lastErrorAt: 0,
      lastUsedAt: null,
      expiredRetries: 0,
    };
    const out = ejectedHealth(h, { now: 1_000, ms: 10_000, consecutive: 2, ejections: 1, provider: 'anthropic' })!;
    expect(out).toMatchObject({ testStatus: 'unavailable', rateLimitedUntil: 11_000, lastErrorType: 'outlier_ejected', errorCode: '503', backoffLevel: 2 });
    expect(out.lastError).toContain('server_error 503');
    expect(ejectedHealth({ ...h, rateLimitedUntil: 50_000 }, { now: 1_000, ms: 10_000, consecutive: 2, ejections: 1, provider: 'a' })!.rateLimitedUntil).toBe(50_000);
    expect(ejectedHealth({ ...h, testStatus: 'banned' }, { now: 1_000, ms: 10_000, consecutive: 2, ejections: 1, provider: 'a' })).toBeNull();
  });
});

describe('outlier detector', () => {
  const detector = () => new OutlierDetector(() => S);

  it('a sibling is succeeding when its latest outcome is a recent success and it is not ejected', () => {
    const clock = new FakeClock();
    const d = detector();
    expect(d.siblingSucceeding('p', 'k2', clock.now())).toBe(false);
    d.onSuccess('p', 'k3', clock.now());
    expect(d.siblingSucceeding('p', 'k2', clock.now())).toBe(true);
    expect(d.siblingSucceeding('p', 'k3', clock.now())).toBe(false); // not its own sibling
    expect(d.siblingSucceeding('q', 'k2', clock.now())).toBe(false); // another provider
    d.onFailure('p', 'k3', false, clock.now());
    expect(d.siblingSucceeding('p', 'k2', clock.now())).toBe(false); // latest outcome is a failure
    d.onSuccess('p', 'k3', clock.now());
    clock.advance(60_000);
    expect(d.siblingSucceeding('p', 'k2', clock.now())).toBe(false); // too long ago
  });

  it('a sibling is steady (the breaker\'s evidence rule) only after two successes in a row since its last failure', () => {
    const clock = new FakeClock();
    const d = detector();
    d.onSuccess('p', 'k3', clock.now());
    expect(d.siblingSucceeding('p', 'k2', clock.now())).toBe(true);
    expect(d.siblingSteady('p', 'k2', clock.now())).toBe(false); // one success: a flapping key looks like this
    d.onSuccess('p', 'k3', clock.now());
    expect(d.siblingSteady('p', 'k2', clock.now())).toBe(true);
    d.onFailure('p', 'k3', false, clock.now());
    d.onSuccess('p', 'k3', clock.now());
    expect(d.siblingSteady('p', 'k2', clock.now())).toBe(false); // the streak starts over
  });

  it('k2 failing while k3 succeeds is ejected after two failures, whichever comes first', () => {
    const d = detector();
    expect(d.onFailure('p', 'k2', d.siblingSucceeding('p', 'k2', 0), 0)).toBeNull();
    expect(d.onSuccess('p', 'k3', 1)).toEqual([]);
    expect(d.onFailure('p', 'k2', d.siblingSucceeding('p', 'k2', 2), 2)).toMatchObject({ connectionId: 'k2', ms: 10_000 });

    const e = detector();
    e.onFailure('p', 'k2', false, 0);
    e.onFailure('p', 'k2', false, 0);
    expect(e.onSuccess('p', 'k3', 1)).toEqual([expect.objectContaining({ connectionId: 'k2', ms: 10_000 })]);
    expect(e.onSuccess('p', 'k3', 2)).toEqual([]); // already ejected
  });

  it('the sweep asks whether a sibling may be ejected', () => {
    const d = detector();
    d.onFailure('p', 'k2', false, 0);
    d.onFailure('p', 'k2', false, 0);
    expect(d.onSuccess('p', 'k3', 1, () => false)).toEqual([]);
    expect(d.record('p', 'k2').ejectedUntil).toBeNull();
  });

  it('a clear forgets the record; a success on a clean provider keeps nothing but the time', () => {
    const d = detector();
    d.onFailure('p', 'k2', false, 0);
    d.clear('k2');
    expect(d.record('p', 'k2')).toBe(CLEAN_OUTLIER);
    d.onSuccess('p', 'k2', 5);
    expect(d.lastSuccessAt('p', 'k2')).toBe(5);
    d.forget('k2');
    expect(d.lastSuccessAt('p', 'k2')).toBeNull();
  });
});
