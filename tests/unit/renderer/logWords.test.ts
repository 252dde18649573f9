// Words of the request log: each wait's reason, the reason a request no connection served ended
// as it did (never the code itself), and the requested → served model.
import { describe, expect, it } from 'vitest';
import { describeRequestError, describeWait, modelShown, waitSummary } from '../../../src/renderer/lib/logWords';
import { REQUEST_WAIT_REASONS, type RequestWait } from '../../../src/shared/model';
import { findJargon } from '../../e2e/jargon';

const wait = (p: Partial<RequestWait>): RequestWait => ({ reason: 'queue_paused', ms: 2_000, connectionName: 'Acme main', ...p });

describe('request log words', () => {
  it('says why each kind of wait happened, in plain words', () => {
    expect(describeWait(wait({ until: new Date(2026, 0, 1, 14, 3, 27).getTime() }))).toBe(
      'Waited 2.00 s: the upstream asked to pause requests to Acme main until 14:03:27 (its retry hint).',
    );
    expect(describeWait(wait({ reason: 'queue_spacing', ms: 150 }))).toBe('Waited 150 ms: rate-limit protection spaces out requests to Acme main.');
    expect(describeWait(wait({ reason: 'queue_busy' }))).toContain('earlier requests to Acme main were queued first');
    expect(describeWait(wait({ reason: 'concurrency_cap', cap: 'model' }))).toContain("this model's limit of requests at once");
    expect(describeWait(wait({ reason: 'all_cooling', heldBy: 'cooling_down', model: 'm-1' }))).toContain('every target was held back, so it waited for Acme main (m-1), cooling down');
    for (const reason of REQUEST_WAIT_REASONS) {
      for (const cap of ['connection', 'model', 'shared', null] as const) {
        expect(findJargon(describeWait(wait({ reason, cap, heldBy: 'provider_cooldown' }))), reason).toEqual([]);
      }
    }
  });

  it('sums the waits of a row with their short reasons', () => {
    expect(waitSummary([])).toBeNull();
    expect(waitSummary([wait({ ms: 1_000 }), wait({ reason: 'concurrency_cap', ms: 500 })])).toBe('waited 1.50 s: upstream asked to pause, too many at once');
  });

  it('gives a plain reason for a request-level code, never the code', () => {
    expect(describeRequestError('all_targets_cooling_down')).toBe('every connection was cooling down');
    expect(describeRequestError('SEMAPHORE_TIMEOUT')).toBe('it waited too long for a free slot');
    expect(describeRequestError('some_new_code')).toBe('some new code');
    expect(describeRequestError(null)).toBeNull();
    for (const code of ['all_targets_cooling_down', 'no_executable_targets', 'ALL_TARGETS_SKIPPED', 'RATE_LIMIT_QUEUE_TIMEOUT', 'client_closed_request', 'lease-capacity-unavailable', 'x_y_z']) {
      expect(findJargon(describeRequestError(code)!), code).toEqual([]);
    }
  });

  it('shows both models only when the served one differs', () => {
    expect(modelShown({ requestedModel: 'team-alias-7', model: 'acme-large' })).toEqual({ requested: 'team-alias-7', served: 'acme-large' });
    expect(modelShown({ requestedModel: 'm', model: 'm' })).toEqual({ requested: 'm', served: null });
    expect(modelShown({ requestedModel: 'm', model: null })).toEqual({ requested: 'm', served: null });
  });
});
