// Typed errors of the management API. Every failure that leaves a boundary has a stable code and
// an HTTP status; the shells turn it into { error: { code, message, field? } }.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody() {
    return { error: { code: this.code, message: this.message, ...(this.field ? { field: this.field } : {}) } };
  }
}

export const badInput = (field: string, message: string) => new ApiError(400, 'invalid_input', message, field);
export const notFound = (what: string, id: string) => new ApiError(404, 'not_found', `${what} ${id} does not exist`);
