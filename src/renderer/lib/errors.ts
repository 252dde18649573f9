// Turns whatever a Bridge call threw into words for the user: the engine's own message (with the
// field it names), never a stack trace.
import { BridgeError } from '../../shared/bridge';

export interface UserError {
  code: string;
  message: string;
  /** The input the engine blamed ("name", "rateLimitOverrides.maxWaitMs"), when it named one. */
  field?: string;
  unauthorized: boolean;
}

export function describeError(err: unknown): UserError {
  if (err instanceof BridgeError) {
    const unauthorized = err.status === 401 || err.code === 'unauthorized';
    return {
      code: err.code,
      message: unauthorized ? 'The management token was not accepted.' : err.message || 'The request failed.',
      field: err.field && err.field !== '(input)' ? err.field : undefined,
      unauthorized,
    };
  }
  if (err instanceof Error && err.message) return { code: 'error', message: err.message, unauthorized: false };
  return { code: 'error', message: 'Something went wrong.', unauthorized: false };
}

/**
 * The engine prefixes field errors with the field ("priority: Too big"); next to the field itself
 * the prefix is noise.
 */
export function messageForField(e: UserError): string {
  if (!e.field) return e.message;
  const prefix = `${e.field}: `;
  return e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
}
