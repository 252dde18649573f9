// Calls a contract method on the handlers with validation at the boundary. Shared by the IPC
// server (desktop) and the HTTP routes (headless), so both answer the same errors.
import { parseInput, type ApiErrorBody, type Handlers, type MethodName } from '../../../shared/contract';
import { ApiError } from '../errors';
import type { Logger } from '../logger';

export type DispatchResult = { ok: true; value: unknown } | { ok: false; status: number; body: ApiErrorBody };

export async function dispatch(handlers: Handlers, name: MethodName, raw: unknown, log: Logger): Promise<DispatchResult> {
  const parsed = parseInput(name, raw);
  if (!parsed.ok) return { ok: false, status: 400, body: { error: parsed.error } };
  try {
    const fn = handlers[name] as (input: unknown) => Promise<unknown>;
    return { ok: true, value: await fn(parsed.value) };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, status: err.status, body: err.toBody() };
    log.error('management.unhandled', { method: name, err });
    return { ok: false, status: 500, body: { error: { code: 'internal_error', message: 'internal error; see the log' } } };
  }
}
