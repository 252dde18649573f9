// The chaos suites' view of the provider breaker: its state polled through the management API
// while a run goes on, so the figures can show when it opened and closed.
import type { TestEngine } from '../support/harness';
import type { BreakerSample } from './measure';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Samples the provider's breaker every `everyMs` (ms since t0) until stop(), which takes a last sample. */
export function pollBreaker(t: TestEngine, provider: string, t0: number, everyMs = 40): { samples: BreakerSample[]; stop(): Promise<void> } {
  const samples: BreakerSample[] = [];
  const sample = async () => {
    const h = await t.api.getHealth();
    samples.push({ t: Date.now() - t0, state: h.breakers.find((b) => b.provider === provider)?.state ?? 'none' });
  };
  let running = true;
  const loop = (async () => {
    while (running) {
      await sample();
      await sleep(everyMs);
    }
  })();
  return {
    samples,
    async stop() {
      running = false;
      await loop;
      await sample();
    },
  };
}
