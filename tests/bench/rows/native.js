// The native row: the SIMD kernel's own source compiled for the host
// (tests/bench/native/harness.c, `make bench-native`), run as a child process
// that times its own loop. What V8 costs over native code for identical source.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { currentClock } from '../timing.js';

export const NATIVE_BINARY = fileURLToPath(new URL('../../../build/rmsnorm-native-bench', import.meta.url));

/** The harness process: one command a line in, one reply a line out. */
class Harness {
  constructor() {
    this.child = spawn(NATIVE_BINARY, [currentClock()], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.waiting = [];
    createInterface({ input: this.child.stdout }).on('line', (line) => this.waiting.shift()?.resolve(line));
    this.child.on('exit', (code) => {
      for (const w of this.waiting.splice(0)) w.reject(new Error(`native harness exited (${code})`));
    });
    this.child.on('error', (error) => {
      for (const w of this.waiting.splice(0)) w.reject(error);
    });
  }

  async send(command) {
    const reply = new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
    this.child.stdin.write(`${command}\n`);
    const line = await reply;
    if (line.startsWith('error')) throw new Error(`native harness: ${line} (after '${command}')`);
    return line;
  }

  close() {
    this.child.stdin.end();
  }
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export const native = {
  id: 'native',
  name: 'limit: same C source, native clang -O3 x86-64-v2',
  async setup({ x, w, rows, dim, eps }) {
    if (!existsSync(NATIVE_BINARY)) {
      throw new Error(`${NATIVE_BINARY} is missing: run \`make bench-native\``);
    }
    const dir = await mkdtemp(path.join(tmpdir(), 'rmsnorm-bench-'));
    const file = path.join(dir, 'io.f32');
    const input = new Float32Array(x.length + w.length);
    input.set(x);
    input.set(w, x.length);
    await writeFile(file, input);
    const harness = new Harness();
    f32[0] = eps;
    await harness.send(`load ${file} ${rows} ${dim} ${u32[0]}`);
    await rm(file);
    return {
      call: () => harness.send('time 1'),
      async: true,
      time: async (iters) => Number(await harness.send(`time ${iters}`)) / 1e9,
      async output() {
        await harness.send(`dump ${file}`);
        const bytes = await readFile(file);
        await rm(file);
        return new Float32Array(new Uint8Array(bytes).buffer); // copied: a Buffer may be unaligned
      },
      dispose: async () => {
        harness.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
};
