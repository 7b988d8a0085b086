import { chromium, type Browser } from 'playwright-core';

// Debian's Chromium through playwright-core (never a browser download), with the flags this
// machine kind needs: without the background-networking ones Chromium keeps dialling out and is
// refused by the closed network. playwright's launch() gives every browser a fresh temporary
// profile (its own --user-data-dir).
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}
