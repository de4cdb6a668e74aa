// The browsers with WebGPU the GPU tests and bench run in, each launched
// with what it needs to expose an adapter here: Chromium with
// --enable-unsafe-webgpu (its SwiftShader adapter; --disable-gpu would hide
// it), Firefox ESR with dom.webgpu.enabled and gfx.webgpu.ignore-blocklist
// (Mesa's lavapipe through Vulkan). WebKitGTK has no WebGPU (navigator.gpu
// is undefined there), so it is not in the list.
//
//   const browser = await launchGpuBrowser('chromium');  // { name, version, openPage, close }
//   const page = await browser.openPage(url);           // evaluate(fn, arg), problems(), close()
import puppeteer from 'puppeteer-core';
import { chromium } from 'playwright-core';
import { watchProblems } from './browser.js';
import { OPTIMIZED_WASM_CHROMIUM_ARGS } from './optimized-wasm.js';
import { pageExpression, unwrap } from './engines.js';

const wanted = process.env.RMSNORM_ENGINES?.split(',');
/** The engines with WebGPU; `RMSNORM_ENGINES=firefox` narrows the list, as for tests/helpers/engines.js. */
export const GPU_ENGINES = ['chromium', 'firefox'].filter((name) => !wanted || wanted.includes(name));

// On a machine with a GPU, Chromium's WebGPU uses it only with Vulkan on
// and the GPU blocklist ignored (Linux); with no GPU it falls back to SwiftShader.
const HARDWARE_FLAGS = ['--enable-features=Vulkan,VulkanFromANGLE', '--use-angle=vulkan', '--ignore-gpu-blocklist', '--enable-gpu'];

async function launchChromium(hardware, optimizedWasm) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--enable-unsafe-webgpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', ...(hardware ? HARDWARE_FLAGS : []),
      ...(optimizedWasm ? OPTIMIZED_WASM_CHROMIUM_ARGS : [])],
  });
  return {
    name: 'chromium',
    version: `Chromium ${browser.version()}`,
    async openPage(url) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems = watchProblems(page);
      await page.goto(url);
      return {
        evaluate: async (fn, arg) => unwrap(await page.evaluate(pageExpression(fn, arg)), fn),
        problems: async () => problems,
        close: () => context.close(),
      };
    },
    close: () => browser.close(),
  };
}

// Firefox's WebGPU pages keep its baseline compiler, optimizedWasm or not:
// onnxruntime-web's WebGPU module (28 MB of wasm) takes half a minute to
// compile with Ion alone here, and a GPU bench page then outlived its
// script timeout (docs/benchmarks.md#method).
async function launchFirefox() {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    protocol: 'webDriverBiDi',
    executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
    headless: true,
    protocolTimeout: 600_000,
    extraPrefsFirefox: { 'dom.webgpu.enabled': true, 'gfx.webgpu.ignore-blocklist': true },
  });
  return {
    name: 'firefox',
    version: `Firefox ${(await browser.version()).replace(/^firefox\//i, '')}`,
    async openPage(url) {
      const page = await browser.newPage();
      const problems = [];
      page.on('console', (msg) => {
        if (msg.type() === 'error' || msg.type() === 'warn') problems.push(`console ${msg.type()}: ${msg.text()}`);
      });
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
      await page.goto(url, { waitUntil: 'load' });
      return {
        evaluate: async (fn, arg) => unwrap(await page.evaluate(pageExpression(fn, arg)), fn),
        problems: async () => problems,
        close: () => page.close(),
      };
    },
    close: () => browser.close(),
  };
}

/** Launches one of GPU_ENGINES, or 'chromium-gpu': Chromium asked to use
 * the machine's GPU (tests/bench/gpu.js); a bench's with optimizedWasm
 * (./optimized-wasm.js; Chromium only). */
export function launchGpuBrowser(name, { optimizedWasm = false } = {}) {
  if (name === 'chromium') return launchChromium(false, optimizedWasm);
  if (name === 'chromium-gpu') return launchChromium(true, optimizedWasm);
  if (name === 'firefox') return launchFirefox();
  throw new RangeError(`launchGpuBrowser: name must be one of ${GPU_ENGINES.join(', ')} or chromium-gpu, got ${name}`);
}
