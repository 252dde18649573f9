// Server-sent events framing, shared by the renderer's HTTP bridge and the tests: feed text as it
// arrives, get back the complete events (a trailing partial event waits for more text).

export interface SseMessage {
  event: string;
  data: string;
}

export class SseParser {
  private buf = '';

  push(text: string): SseMessage[] {
    this.buf += text;
    const out: SseMessage[] = [];
    let idx: number;
    while ((idx = this.buf.indexOf('\n\n')) >= 0) {
      const block = this.buf.slice(0, idx);
      this.buf = this.buf.slice(idx + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length) out.push({ event, data: data.join('\n') });
    }
    return out;
  }
}
