// Words for the request log: why a request waited (request queue, concurrency caps, cooldown
// waits), why a request that no connection served ended as it did (the "Served by" column), and
// the requested → served model. The codes themselves stay one click away (components/TechName).
import type { RequestLogEntry, RequestWait } from '../../shared/model';
import { formatClock, formatMs } from './format';
import { SKIP_REASONS } from './reasons';

const CAP: Record<NonNullable<RequestWait['cap']>, string> = {
  connection: "the connection's limit of requests at once was reached",
  model: "this model's limit of requests at once on the connection was reached",
  shared: 'the requests sharing this account were all in flight',
};

/** One wait in plain words: "Waited 2.00 s: the upstream asked to pause requests to Main until 14:03:27." */
export function describeWait(w: RequestWait): string {
  const on = w.connectionName ? ` to ${w.connectionName}` : '';
  let why: string;
  switch (w.reason) {
    case 'queue_paused':
      why = `the upstream asked to pause requests${on}${w.until ? ` until ${formatClock(w.until)}` : ''} (its retry hint)`;
      break;
    case 'queue_spacing':
      why = `rate-limit protection spaces out requests${on}`;
      break;
    case 'queue_busy':
      why = `earlier requests${on} were queued first`;
      break;
    case 'concurrency_cap':
      why = `${w.cap ? CAP[w.cap] : 'a limit of requests at once was reached'}${w.connectionName ? ` (${w.connectionName})` : ''}`;
      break;
    case 'all_cooling': {
      const held = w.heldBy ? SKIP_REASONS[w.heldBy] ?? 'held back' : 'held back';
      why = `every target was held back, so it waited for ${w.connectionName ?? 'the first'}${w.model ? ` (${w.model})` : ''}, ${held}, to come back${w.until ? ` at ${formatClock(w.until)}` : ''}`;
      break;
    }
    default:
      why = 'it waited for a free turn';
  }
  return `Waited ${formatMs(w.ms)}: ${why}.`;
}

/** The short reason of a row's waits, for the row itself: "waited 2.00 s: upstream pause". */
export function waitSummary(waits: readonly RequestWait[] | undefined): string | null {
  if (!waits || waits.length === 0) return null;
  const total = waits.reduce((s, w) => s + w.ms, 0);
  const kinds = [...new Set(waits.map((w) => SHORT[w.reason] ?? 'a free turn'))];
  return `waited ${formatMs(total)}: ${kinds.join(', ')}`;
}

const SHORT: Record<RequestWait['reason'], string> = {
  queue_paused: 'upstream asked to pause',
  queue_spacing: 'requests spaced out',
  queue_busy: 'busy queue',
  concurrency_cap: 'too many at once',
  all_cooling: 'every target cooling down',
};

/** Why a request ended without a serving connection, by the code it answered with. */
const REQUEST_ERRORS: Record<string, string> = {
  all_targets_cooling_down: 'every connection was cooling down',
  no_executable_targets: 'no connection could take it',
  ALL_TARGETS_SKIPPED: 'every connection was skipped',
  model_not_found: 'no connection serves this model',
  missing_model: 'the request named no model',
  invalid_model: 'the model name is not valid',
  invalid_json: 'the request was not valid JSON',
  invalid_request: 'the request was not valid',
  untranslatable_request: "the request cannot be sent in any connection's protocol",
  invalid_client_key: 'the client key was refused',
  forbidden_host: 'the request came from a host that is not allowed',
  payload_too_large: 'the request was too large',
  request_timeout: 'the request arrived too slowly',
  headers_too_large: 'the request headers were too large',
  not_found: 'no such endpoint',
  method_not_allowed: 'the endpoint does not take this method',
  upstream_unreachable: 'the upstream could not be reached',
  upstream_timeout: 'the upstream did not answer in time',
  upstream_error: 'the upstream answered with an error',
  RATE_LIMIT_QUEUE_FULL: 'the request queue was full',
  RATE_LIMIT_QUEUE_TIMEOUT: 'it waited in the request queue too long',
  RATE_LIMIT_EXECUTION_TIMEOUT: 'the upstream took longer than the time allowed',
  SEMAPHORE_TIMEOUT: 'it waited too long for a free slot',
  SEMAPHORE_QUEUE_FULL: 'too many requests were waiting for a slot',
  internal_error: 'an internal error',
  client_closed_request: 'the client left before the answer',
  log_incomplete: 'the app stopped before the request finished',
  count_tokens_estimated: 'counted locally (an estimate)',
  lease_scope_missing: 'the lease did not say what it covers',
  lease_no_allowed_connections: "no connection is allowed by this key's lease",
  lease_connection_not_allowed: "the connection is not allowed by this key's lease",
  lease_not_found: 'the lease was not found',
  lease_key_mismatch: 'the lease belongs to another client key',
  lease_generation_stale: 'the lease was replaced by a newer one',
  lease_owner_active: 'another session holds the lease',
  'lease-capacity-unavailable': 'no connection had room for another lease',
};

/** The plain reason for a request-level code; an unknown code as spaced words, never the code itself. */
export function describeRequestError(code: string | null | undefined): string | null {
  if (!code) return null;
  const known = REQUEST_ERRORS[code];
  if (known) return known;
  const words = code.replace(/[_-]+/g, ' ').trim().toLowerCase();
  return words || null;
}

/** The model column: the model asked for and, when a mapping or combo rewrote it, the one served. */
export function modelShown(e: Pick<RequestLogEntry, 'requestedModel' | 'model'>): { requested: string | null; served: string | null } {
  const requested = e.requestedModel ?? null;
  const served = e.model ?? null;
  if (requested && served && requested !== served) return { requested, served };
  return { requested: requested ?? served, served: null };
}
