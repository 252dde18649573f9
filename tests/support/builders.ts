// Builders for engine records in unit tests and benches: a complete ConnectionRecord with
// overridable fields, so each test states only what matters to it.
import { emptyHealth, type ConnectionRecord } from '../../src/main/engine/store/connectionsRepo';

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
    rateLimitProtection: false,
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
