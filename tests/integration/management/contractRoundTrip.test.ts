// Contract drift over real HTTP: every contract method, called through the renderer's HTTP bridge,
// reaches the handler of the same name on the headless server with the same parsed input it would
// get over IPC, and every push event reaches on().
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_NAMES, METHOD_NAMES, parseInput, type EventName } from '../../../src/shared/contract';
import { ManagementToken } from '../../../src/main/engine/auth/managementToken';
import { systemClock } from '../../../src/main/engine/clock';
import { EventBus } from '../../../src/main/engine/events';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { ManagementHttpServer } from '../../../src/main/engine/management/httpServer';
import { createHttpBridge } from '../../../src/renderer/bridge/http';
import { recordingHandlers, sampleInput } from '../../unit/foundation/support/contractSamples';

describe('contract round trip over HTTP', () => {
  const { handlers, calls } = recordingHandlers();
  const bus = new EventBus();
  const token = new ManagementToken('sym_round-trip-token-0123456789');
  const server = new ManagementHttpServer({
    handlers,
    token,
    bus,
    clock: systemClock,
    log: createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => 0 }),
    rendererDir: null,
  });
  let bridge: ReturnType<typeof createHttpBridge>;

  beforeAll(async () => {
    const port = await server.listen(0);
    bridge = createHttpBridge({ baseUrl: `http://127.0.0.1:${port}`, token: token.value });
  });
  afterAll(async () => {
    bridge.close();
    await server.close();
  });

  it.each(METHOD_NAMES)('%s reaches its own handler with the same input as over IPC', async (name) => {
    calls.length = 0;
    const input = sampleInput(name);
    const answer = await (bridge[name] as (i: unknown) => Promise<unknown>)(input);
    expect(answer).toEqual({ answeredBy: name });
    const expected = parseInput(name, input);
    expect(expected.ok).toBe(true);
    expect(calls).toEqual([{ name, input: expected.ok ? expected.value : null }]);
  });

  it('delivers every push event through on()', async () => {
    const got = new Map<EventName, unknown>();
    const all = Promise.all(
      EVENT_NAMES.map(
        (e) =>
          new Promise<void>((resolve) => {
            const off = bridge.on(e, (p) => {
              got.set(e, p);
              off();
              resolve();
            });
          }),
      ),
    );
    // Emit until the stream is connected and every event has arrived (bounded).
    for (let i = 0; i < 200 && got.size < EVENT_NAMES.length; i++) {
      for (const e of EVENT_NAMES) bus.emit(e, { probe: e } as never);
      await new Promise((r) => setTimeout(r, 10));
    }
    await all;
    expect(Object.fromEntries(got)).toEqual(Object.fromEntries(EVENT_NAMES.map((e) => [e, { probe: e }])));
  });
});
