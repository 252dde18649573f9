// The parts of undici the engine uses, loaded on their own. undici's index loads every dispatcher,
// the mocks, fetch, WebSocket, EventSource and the caches: about 8 MiB resident in a process that
// uses none of them (issue 25). The engine needs Agent, Pool and ProxyAgent, and request() on a
// dispatcher, which undici's index mixes into Dispatcher's prototype from its api module; this
// does the same. The paths are undici's own module files at the pinned version (package.json);
// tests/unit/foundation/undiciParts.test.ts fails if an upgrade moves them.
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const load = createRequire(import.meta.url);

export const Agent: typeof Undici.Agent = load('undici/lib/dispatcher/agent.js');
export const Pool: typeof Undici.Pool = load('undici/lib/dispatcher/pool.js');
export const ProxyAgent: typeof Undici.ProxyAgent = load('undici/lib/dispatcher/proxy-agent.js');

const DispatcherBase: { prototype: object } = load('undici/lib/dispatcher/dispatcher.js');
const api: Record<string, unknown> = load('undici/lib/api/index.js');
// What undici's index does once at load: request(), stream(), pipeline() ... on every dispatcher.
if (!('request' in DispatcherBase.prototype)) Object.assign(DispatcherBase.prototype, api);

export type { Dispatcher } from 'undici';
