#!/usr/bin/env node
// Renders resources/icon.svg into the PNGs the desktop shell uses (app icon and tray icons), with
// Debian's Chromium through Playwright. A development tool: the PNGs are committed.
import { readFileSync } from 'node:fs';
import { chromium } from '@playwright/test';

const svg = readFileSync('resources/icon.svg', 'utf8');
const tray = (color) => svg.replace('url(#bg)', color);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage();
for (const [file, size, source] of [
  ['resources/icon.png', 512, svg],
  ['resources/tray.png', 64, tray('#4f46e5')],
  ['resources/tray-degraded.png', 64, tray('#d97706')],
]) {
  await page.setViewportSize({ width: size, height: size });
  await page.setContent(`<html><body style="margin:0;background:transparent">${source.replace('width="512" height="512"', `width="${size}" height="${size}"`)}</body></html>`);
  await page.screenshot({ path: file, omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
}
await browser.close();
