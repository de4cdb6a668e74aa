// Headless Chromium for browser tests: Debian's /usr/bin/chromium driven by
// playwright-core (a test tool's own browser download cannot work here).
import { chromium } from 'playwright-core';
import { startServer } from '../../web/serve.js';

const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
];

/** Chromium, with `args` after the project's own. */
export function launchBrowser(args = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [...CHROMIUM_ARGS, ...args],
  });
}

/** The demo server on a free port, serving the repository or `root`: { server, url(path) }. */
export async function startDemoServer(root) {
  const server = await startServer(0, '127.0.0.1', root);
  const { port } = server.address();
  return { server, url: (path = '/web/') => `http://127.0.0.1:${port}${path}` };
}

/**
 * Opens a page that fails the test on any console error or warning, uncaught
 * exception or failed request: returns { page, problems }.
 */
export async function openCheckedPage(browser, url, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = watchProblems(page);
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
  });
  await page.goto(url);
  return { page, problems };
}

/** The console errors and warnings, uncaught exceptions and failed requests
 * of a Playwright page, as they come: the list it returns fills up. */
export function watchProblems(page) {
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
  return problems;
}
