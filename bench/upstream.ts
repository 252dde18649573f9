// Bench upstream: a minimal OpenAI-shaped server in its own process, so the load generator, the
// proxy and the upstream do not share an event loop. The requested model picks the behaviour:
//   bench-delay-<ms>     JSON answer after <ms> milliseconds
//   bench-stream-<n>     SSE stream of n chunks
//   bench-ttfo-<ms>      SSE stream: a role chunk (no output) at once, the first text <ms> later, 20 more, [DONE]
// On Google's path (`/v1beta/models/{model}:streamGenerateContent?alt=sse`, the model in the path)
// it answers as Gemini does: bench-stream-<n> is n GenerateContentResponse chunks as SSE (CRLF
// framed, as Google sends them), the last with finishReason STOP and usageMetadata.
// On Anthropic's path (`/v1/messages`) a non-stream request gets an Anthropic Messages answer
// (bench-delay-<ms> as above), and bench-stream-<n> Anthropic's events (message_start, a text
// block of n deltas, message_delta with the usage, message_stop), so the bench can measure the
// native Anthropic path, as Claude Code uses it (it always streams).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'bench',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});

const message = JSON.stringify({
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  model: 'bench',
  content: [{ type: 'text', text: 'ok' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 1 },
});

const chunk = (i: number) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta: { content: `t${i} ` }, finish_reason: null }] })}\n\n`;

/** Anthropic's stream of n text deltas, as its Messages API frames it (event and data lines). */
const anthropicEvent = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const anthropicHead =
  anthropicEvent('message_start', { message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'bench', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }) +
  anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
const anthropicDelta = (i: number) => anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `t${i} ` } });
const anthropicTail = (n: number) =>
  anthropicEvent('content_block_stop', { index: 0 }) +
  anthropicEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: n } }) +
  anthropicEvent('message_stop', {});

const geminiChunk = (i: number, last: boolean) =>
  `data: ${JSON.stringify({
    candidates: [{ content: { parts: [{ text: `t${i} ` }], role: 'model' }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
    ...(last ? { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: i + 1, totalTokenCount: i + 6 } } : {}),
    modelVersion: 'bench',
    responseId: 'gem-bench',
  })}\r\n\r\n`;

/** `/v1beta/models/{model}:{method}`: the model and method of a Gemini call. */
const GEMINI_PATH = /^\/v1(?:beta)?\/models\/(.+):(generateContent|streamGenerateContent)$/;

const server = createServer((req, res) => {
  const gemini = GEMINI_PATH.exec((req.url ?? '').split('?')[0]!);
  if (gemini) {
    req.resume();
    req.on('end', () => {
      const n = Number(/^bench-stream-(\d+)$/.exec(decodeURIComponent(gemini[1]!))?.[1] ?? 1);
      if (gemini[2] !== 'streamGenerateContent') {
        const body = JSON.stringify({ candidates: [{ content: { parts: [{ text: 'ok' }], role: 'model' }, finishReason: 'STOP', index: 0 }], modelVersion: 'bench' });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        return void res.end(body);
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const write = () => {
        while (i < n - 1) {
          if (!res.write(geminiChunk(i++, false))) return void res.once('drain', write);
        }
        res.end(geminiChunk(i, true));
      };
      write();
    });
    return;
  }
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    // The model from the body's head (the benches' bodies name it first): parsing a large
    // conversation whole here would make this fake the bottleneck of the large-body table.
    const head = parts[0]?.subarray(0, 4096).toString('latin1') ?? '';
    let model = /^\{\s*"model"\s*:\s*"([^"\\]*)"/.exec(head)?.[1];
    if (model === undefined) {
      try {
        model = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { model?: string }).model;
      } catch {
        // keep the default
      }
    }
    model ??= 'bench-delay-0';
    const ttfo = /^bench-ttfo-(\d+)$/.exec(model);
    if (ttfo) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
      setTimeout(() => {
        for (let i = 0; i < 21; i++) res.write(chunk(i));
        res.end(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
      }, Number(ttfo[1]));
      return;
    }
    const stream = /^bench-stream-(\d+)$/.exec(model);
    const anthropic = (req.url ?? '').split('?')[0] === '/v1/messages';
    if (stream) {
      const n = Number(stream[1]);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const frame = anthropic ? anthropicDelta : chunk;
      if (anthropic) res.write(anthropicHead);
      let i = 0;
      const write = () => {
        while (i < n) {
          if (!res.write(frame(i++))) return void res.once('drain', write);
        }
        res.end(anthropic ? anthropicTail(n) : 'data: [DONE]\n\n');
      };
      write();
      return;
    }
    const delay = Number(/^bench-delay-(\d+)$/.exec(model)?.[1] ?? 0);
    const json = anthropic ? message : completion;
    const answer = () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
      res.end(json);
    };
    if (delay > 0) setTimeout(answer, delay);
    else answer();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
