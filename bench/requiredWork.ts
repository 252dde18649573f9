// Bench reference: the least work a gateway that keeps Switchyard's promises does per request,
// written flat in one function, in its own process. Where the bare hop (minimalProxy.ts) is the
// floor for any Node gateway, this is the floor for one that
//   - checks a client key (bearer or x-api-key),
//   - parses the JSON body and rewrites the model (`provider/model` -> `model`),
//   - calls the upstream with the provider's key on a keep-alive pool (undici),
//   - reads the answer whole and parses it (the empty-answer check and the usage),
//   - journals a log line for the request before the answer's first byte (one write per event-loop
//     turn, as logs/logJournal.ts does: kill -9 loses no answered request),
//   - writes the answer in one go.
// No routing, resilience, admission, translation, store or dashboard. `bench/lean.ts` reports it
// beside Switchyard, so the distance to the bare hop splits into what these promises cost and
// what the rest of Switchyard costs. Usage: requiredWork.ts <upstream origin> <client key>
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';

const [upstream, clientKey] = process.argv.slice(2);
if (!upstream || !clientKey) throw new Error('usage: requiredWork.ts <upstream origin> <client key>');
const dir = mkdtempSync(join(tmpdir(), 'switchyard-required-work-'));
const journal = openSync(join(dir, 'journal.ndjson'), 'a');
const agent = new Agent({ keepAliveTimeout: 30_000 });

let lines: string[] = [];
let waiting: (() => void)[] = [];
let scheduled = false;
const endOfTurn = () => {
  scheduled = false;
  if (lines.length) writeSync(journal, `${lines.join('\n')}\n`);
  lines = [];
  const w = waiting;
  waiting = [];
  for (const resolve of w) resolve();
};
const journalled = (line: string) =>
  new Promise<void>((resolve) => {
    lines.push(line);
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(endOfTurn);
    }
  });

let seq = 0;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const startedAt = Date.now();
    const key = req.headers['x-api-key'] ?? req.headers.authorization?.slice(7);
    if (key !== clientKey) return void res.writeHead(401).end();
    const anthropic = req.url === '/v1/messages';
    let body: { model?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: unknown };
    } catch {
      return void res.writeHead(400).end();
    }
    const requested = String(body.model);
    const model = requested.slice(requested.indexOf('/') + 1);
    body.model = model;
    try {
      const r = await agent.request({
        origin: upstream,
        path: req.url ?? '/',
        method: 'POST',
        headers: anthropic
          ? { 'content-type': 'application/json', 'x-api-key': 'sk-provider', 'anthropic-version': '2023-06-01' }
          : { 'content-type': 'application/json', authorization: 'Bearer sk-provider' },
        body: JSON.stringify(body),
      });
      const parts: Buffer[] = [];
      for await (const c of r.body) parts.push(c as Buffer);
      const text = Buffer.concat(parts).toString('utf8');
      const answer = JSON.parse(text) as { usage?: Record<string, number>; choices?: unknown[]; content?: unknown[] };
      if (r.statusCode === 200 && !(answer.choices?.length || answer.content?.length)) return void res.writeHead(502).end();
      const u = answer.usage ?? {};
      await journalled(
        JSON.stringify({
          id: `req_${++seq}`,
          startedAt,
          path: req.url,
          requestedModel: requested,
          model,
          status: r.statusCode,
          inputTokens: u.prompt_tokens ?? u.input_tokens ?? null,
          outputTokens: u.completion_tokens ?? u.output_tokens ?? null,
          durationMs: Date.now() - startedAt,
        }),
      );
      res.writeHead(r.statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    } catch {
      if (!res.headersSent) res.writeHead(502).end();
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
process.on('SIGTERM', () =>
  server.close(() => {
    closeSync(journal);
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }),
);
