// The browser engines the tests and the benchmark run in, behind one small
// interface, so that a test loops over ENGINES and a fourth engine is one
// more entry:
//
//   const browser = await engine.launch();      // { name, version, openPage, close }
//   engine.launch({ optimizedWasm: true })      // a bench's: ./optimized-wasm.js
//   const page = await browser.openPage(url);   // navigated, loaded
//   await page.evaluate(fn, arg);               // fn(arg) in the page, awaited, JSON round trip
//   await page.waitFor(fn, arg, timeoutMs);     // polls evaluate until truthy
//   await page.problems();                      // console errors and warnings, page errors, failed requests
//   await page.close();
//
// Chromium: Debian's /usr/bin/chromium driven by playwright-core (CDP).
// Firefox: Debian's firefox-esr driven by puppeteer-core over WebDriver BiDi.
// WebKit: WebKitGTK's MiniBrowser driven by Debian's WebKitWebDriver, a W3C
//   (classic) WebDriver server spoken to with plain fetch(), on an Xvfb
//   display this helper starts on a free display number and stops on close.
// No browser is downloaded: the test tools' own downloads cannot work here.
//
// Problems: Chromium and Firefox report console messages, page errors and
// responses as events. Classic WebDriver has no event stream, so every HTML
// page the test server sends starts with PAGE_HOOK, a script that records
// console.error/warn, uncaught errors, unhandled rejections and resources
// that fail to load before the page's own scripts run; WebKit's problems()
// reads that record back. The test server also reports every 4xx reply it
// sends, for every engine. Not seen in WebKit: console calls inside workers
// (a worker's uncaught error still reaches the page through worker.onerror).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import puppeteer from 'puppeteer-core';
import { startServer } from '../../web/serve.js';
import { launchBrowser as launchChromium, watchProblems } from './browser.js';
import { OPTIMIZED_WASM_CHROMIUM_ARGS, OPTIMIZED_WASM_FIREFOX_PREFS } from './optimized-wasm.js';

export const PAGE_HOOK = `<script>(() => {
  const problems = [];
  Object.defineProperty(window, '__pageProblems', { value: problems });
  const text = (args) => args.map((a) => (a instanceof Error ? a.stack || String(a) : String(a))).join(' ');
  for (const [method, type] of [['error', 'error'], ['warn', 'warning']]) {
    const original = console[method];
    console[method] = function (...args) {
      problems.push('console ' + type + ': ' + text(args));
      return original.apply(this, args);
    };
  }
  addEventListener('error', (event) => {
    if (event.target === window) problems.push('page error: ' + event.message);
    else problems.push('failed to load: ' + (event.target.src || event.target.href || event.target.tagName));
  }, true);
  addEventListener('unhandledrejection', (event) => problems.push('page error: unhandled rejection: ' + text([event.reason])));
})();</script>`;

// Every 4xx reply of any test server, in order; a page reports those sent
// since it was opened (pages are opened one at a time).
const serverErrors = [];

/**
 * The repository (or `root`) served for the browsers: `url(path, { isolated })`
 * gives the page's address, isolated (COOP/COEP) under the /isolated prefix.
 */
export async function startTestServer(root) {
  const server = await startServer(0, '127.0.0.1', root, {
    isolatedPrefix: '/isolated',
    headHtml: PAGE_HOOK,
    onError: (status, path) => serverErrors.push(`HTTP ${status}: ${path}`),
  });
  const { port } = server.address();
  return {
    url: (path = '/web/', { isolated = false } = {}) => `http://127.0.0.1:${port}${isolated ? '/isolated' : ''}${path}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The expression evaluated in every engine: fn(arg), awaited, as { json } or { error }. */
export function pageExpression(fn, arg) {
  return `(async () => {
    try {
      const value = await (${fn.toString()})(${JSON.stringify(arg ?? null)});
      return { json: JSON.stringify(value === undefined ? null : value) };
    } catch (error) {
      return { error: String(error && error.stack ? error.stack : error) };
    }
  })()`;
}

export function unwrap(reply, fn) {
  if (reply?.error !== undefined) throw new Error(`in the page: ${reply.error}\n(evaluating ${String(fn).slice(0, 120)})`);
  return JSON.parse(reply.json);
}

/**
 * The page interface over an engine's `run(expression)`, `engineProblems()`
 * and `close()`; `serverMark` is the count of server errors before the page
 * was navigated.
 */
function pageOf({ run, engineProblems, close, serverMark }) {
  const page = {
    evaluate: async (fn, arg) => unwrap(await run(pageExpression(fn, arg)), fn),
    async waitFor(fn, arg, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await page.evaluate(fn, arg);
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`waitFor timed out after ${timeoutMs} ms: ${String(fn).slice(0, 120)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    problems: async () => [...(await engineProblems()), ...serverErrors.slice(serverMark)],
    close,
  };
  return page;
}

const chromium = {
  name: 'chromium',
  async launch({ optimizedWasm = false } = {}) {
    const browser = await launchChromium(optimizedWasm ? OPTIMIZED_WASM_CHROMIUM_ARGS : []);
    return {
      name: 'chromium',
      version: `Chromium ${browser.version()}`,
      async openPage(url, { viewport = { width: 1280, height: 900 } } = {}) {
        const serverMark = serverErrors.length;
        const context = await browser.newContext({ viewport });
        const page = await context.newPage();
        const problems = watchProblems(page);
        await page.goto(url);
        return pageOf({
          run: (expression) => page.evaluate(expression),
          engineProblems: async () => problems,
          close: () => context.close(),
          serverMark,
        });
      },
      close: () => browser.close(),
    };
  },
};

const firefox = {
  name: 'firefox',
  async launch({ optimizedWasm = false } = {}) {
    const browser = await puppeteer.launch({
      browser: 'firefox',
      protocol: 'webDriverBiDi',
      executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
      headless: true,
      extraPrefsFirefox: optimizedWasm ? OPTIMIZED_WASM_FIREFOX_PREFS : {},
      protocolTimeout: 600_000, // the bench measures a whole shape in one call
    });
    return {
      name: 'firefox',
      version: `Firefox ${(await browser.version()).replace(/^firefox\//i, '')}`,
      async openPage(url, { viewport = { width: 1280, height: 900 } } = {}) {
        const serverMark = serverErrors.length;
        const page = await browser.newPage();
        await page.setViewport(viewport);
        const problems = [];
        page.on('console', (msg) => {
          if (msg.type() === 'error' || msg.type() === 'warn') problems.push(`console ${msg.type()}: ${msg.text()}`);
        });
        page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
        page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
        await page.goto(url, { waitUntil: 'load' });
        return pageOf({
          run: (expression) => page.evaluate(expression),
          engineProblems: async () => problems,
          close: () => page.close(),
          serverMark,
        });
      },
      close: () => browser.close(),
    };
  },
};

/** A free TCP port on localhost. */
async function freePort() {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Xvfb on a display number it picks itself (-displayfd): { display, stop() }. */
async function startXvfb() {
  const xvfb = spawn('Xvfb', ['-displayfd', '1', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'],
    { stdio: ['ignore', 'pipe', 'ignore'] });
  const [line] = await Promise.race([
    once(createInterface({ input: xvfb.stdout }), 'line'),
    once(xvfb, 'exit').then(([code]) => { throw new Error(`Xvfb exited (${code}) before choosing a display`); }),
  ]);
  return { display: `:${line.trim()}`, stop: () => xvfb.kill() };
}

// Generous script timeout: the bit-exactness suite and the bench run inside one call.
const WEBKIT_TIMEOUTS = { script: 600_000, pageLoad: 60_000, implicit: 0 };

const webkit = {
  name: 'webkit',
  // optimizedWasm: not set here (./optimized-wasm.js).
  async launch() {
    const xvfb = await startXvfb();
    const port = await freePort();
    const driver = spawn(process.env.WEBKIT_DRIVER_PATH ?? 'WebKitWebDriver', [`--port=${port}`, '--host=127.0.0.1'],
      { stdio: 'ignore', env: { ...process.env, DISPLAY: xvfb.display } });
    const base = `http://127.0.0.1:${port}`;
    const stop = () => {
      driver.kill();
      xvfb.stop();
    };
    async function call(method, path, body) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const reply = await response.json();
      if (!response.ok) throw new Error(`WebKitWebDriver ${method} ${path}: ${reply.value?.error}: ${reply.value?.message}`);
      return reply.value;
    }
    try {
      for (let tries = 0; ; tries++) {
        try {
          if ((await call('GET', '/status')).ready) break;
        } catch (error) {
          if (tries > 100) throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const { sessionId, capabilities } = await call('POST', '/session', {
        capabilities: {
          alwaysMatch: {
            'webkitgtk:browserOptions': { args: ['--automation'] },
            timeouts: WEBKIT_TIMEOUTS,
          },
        },
      });
      const session = `/session/${sessionId}`;
      const run = (expression) => call('POST', `${session}/execute/async`, {
        script: `const done = arguments[arguments.length - 1]; ${expression}.then(done);`,
        args: [],
      });
      return {
        name: 'webkit',
        version: `WebKitGTK ${capabilities.browserVersion} (${capabilities.browserName})`,
        async openPage(url, { viewport = { width: 1280, height: 900 } } = {}) {
          const serverMark = serverErrors.length;
          await call('POST', `${session}/window/rect`, viewport); // the window's outer size: no viewport in classic WebDriver
          await call('POST', `${session}/url`, { url });
          return pageOf({
            run,
            engineProblems: () => run('Promise.resolve({ json: JSON.stringify(window.__pageProblems ?? ["no page hook: not served by startTestServer"]) })')
              .then((reply) => JSON.parse(reply.json)),
            close: () => call('POST', `${session}/url`, { url: 'about:blank' }),
            serverMark,
          });
        },
        async close() {
          await call('DELETE', session).catch(() => {});
          stop();
        },
      };
    } catch (error) {
      stop();
      throw error;
    }
  },
};

/** Every engine the tests run in; `RMSNORM_ENGINES=firefox,webkit` narrows the list. */
export const ALL_ENGINES = [chromium, firefox, webkit];
const wanted = process.env.RMSNORM_ENGINES?.split(',');
export const ENGINES = wanted ? ALL_ENGINES.filter((e) => wanted.includes(e.name)) : ALL_ENGINES;
export const engineNamed = (name) => {
  const engine = ALL_ENGINES.find((e) => e.name === name);
  if (!engine) throw new RangeError(`unknown engine ${name}: one of ${ALL_ENGINES.map((e) => e.name).join(', ')}`);
  return engine;
};
