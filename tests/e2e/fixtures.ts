// Playwright fixtures: each test gets a fresh fake upstream and a fresh headless shell (its own
// data dir), stopped after the test.
import { test as base } from '@playwright/test';
import { FakeUpstream } from '../support/fakeUpstream';
import { startServe, type Headless } from './headless';

export const test = base.extend<{ fake: FakeUpstream; app: Headless }>({
  // eslint-disable-next-line no-empty-pattern
  fake: async ({}, use) => {
    const fake = await FakeUpstream.start();
    await use(fake);
    await fake.close();
  },
  // eslint-disable-next-line no-empty-pattern
  app: async ({}, use) => {
    const app = await startServe();
    await use(app);
    await app.stop();
  },
});

export { expect } from '@playwright/test';
