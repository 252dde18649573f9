// Writing server-sent events. Data is always one line of JSON (JSON.stringify never emits a raw
// newline), so one `data:` line per event is enough.

export function sseEvent(event: string | null, data: string): string {
  return event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
}

/** An SSE comment: ignored by every client parser, keeps idle connections alive. */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}
