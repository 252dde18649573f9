// `npm run screenshots`: every dashboard page, with realistic state, at 1440 and 800 px wide, into
// docs/screenshots/ (for issue notes and the README). Not part of `npm test`: it checks nothing.
import { defineConfig } from '@playwright/test';
import base from '../../playwright.config';

export default defineConfig({
  ...base,
  testDir: '.',
  outputDir: '../../test-results/screens',
  timeout: 600_000,
});
