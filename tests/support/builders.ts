// Builders for engine records in unit tests and benches: a complete ConnectionRecord with
// overridable fields, so each test states only what matters to it.
import { emptyHealth, type ConnectionRecord } from '../../src/main/engine/store/connectionsRepo';
import type { AttemptEntry } from '../../src/shared/model';

let seq = 0;

export function connectionRecord(over: Partial<ConnectionRecord> = {}): ConnectionRecord {
  seq++;
  return {
    id: `c${seq}`,
    name: `Conn ${seq}`,
    kind: 'openai',
    protocol: 'openai',
    provider: 'openai',
    authClass: 'apikey',
    baseUrl: 'https://api.example.test/v1',
    priority: 1,
    enabled: true,
    models: [],
    passthroughModels: true,
    servesResponses: true,
    maxConcurrent: null,
    rateLimitOverrides: {},
    protectionMode: 'auto',
    disableCooling: false,
    providerSpecificData: {},
    timeouts: {},
    secretEnc: null,
    secretMasked: null,
    outboundProxy: null,
    outboundProxyEnc: null,
    health: emptyHealth(),
    createdAt: seq,
    updatedAt: seq,
    ...over,
  };
}

/** A request-log attempt row (one served attempt on connection A), with overridable fields. */
export function attemptEntry(over: Partial<AttemptEntry> = {}): AttemptEntry {
  return {
    attempt: 1,
    connectionId: 'c1',
    connectionName: 'A',
    provider: 'anthropic',
    model: 'm',
    startedAt: 0,
    status: 200,
    errorClass: null,
    errorCode: null,
    errorMessage: null,
    ttfbMs: 10,
    durationMs: 100,
    failedOver: false,
    queuedMs: 0,
    ...over,
  };
}
