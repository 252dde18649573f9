// The one error a codec throws: the inbound request asks for something the target protocol cannot
// express (`untranslatable_request`), or is malformed where translation has to read it
// (`invalid_request`). Always a 400 naming the inbound field by its JSON path, so the agent (and the
// request log) can see exactly what was refused; nothing meaningful is ever dropped silently.

export type CodecErrorCode = 'untranslatable_request' | 'invalid_request';

export class CodecError extends Error {
  readonly status = 400;

  constructor(
    /** JSON path in the inbound request, e.g. `messages[2].content[0].type`. */
    readonly field: string,
    message: string,
    readonly code: CodecErrorCode = 'untranslatable_request',
  ) {
    super(message);
    this.name = 'CodecError';
  }
}

export const untranslatable = (field: string, message: string) => new CodecError(field, message, 'untranslatable_request');
export const invalid = (field: string, message: string) => new CodecError(field, message, 'invalid_request');
