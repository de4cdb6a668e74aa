// The generated WGSL, held in the tree: `node tests/webgpu-golden.js`
// checks the golden shaders (tests/webgpu-golden/*.wgsl.golden) and the digest
// over every variant (tests/webgpu-golden/digest.txt) against what the
// generators write now, `--write` writes them anew. A change to a
// generator that changes a shader shows here as a diff of real WGSL, made
// on purpose, with its reason in the commit; tests/webgpu-shaders.test.js
// fails until it is written. Every variant is compiled on both adapters by
// tests/webgpu.test.js.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { everyShader, goldenShaders } from './helpers/webgpu-variants.js';

export const GOLDEN_DIR = fileURLToPath(new URL('webgpu-golden/', import.meta.url));

/** The digest of every variant's shader: sha256 over their code in
 * enumeration order (each followed by a NUL), and the count. Keys are
 * derived from the variants (src/webgpu/programs/layout.js, keyOf): not digested. */
export function digestOfEveryShader() {
  const hash = createHash('sha256');
  let count = 0;
  for (const { code } of everyShader()) {
    hash.update(`${code}\0`);
    count++;
  }
  return `sha256 ${hash.digest('hex')} over ${count} shaders\n`;
}

/** What differs between the tree's goldens and the generators' output: a list of file names. */
export async function staleGoldens() {
  const stale = [];
  const golden = { ...goldenShaders(), 'digest.txt': digestOfEveryShader() };
  for (const [name, code] of Object.entries(golden)) {
    const held = await readFile(GOLDEN_DIR + name, 'utf8').catch(() => null);
    if (held !== code) stale.push(name);
  }
  return stale;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) {
    const golden = { ...goldenShaders(), 'digest.txt': digestOfEveryShader() };
    for (const [name, code] of Object.entries(golden)) await writeFile(GOLDEN_DIR + name, code);
    console.log(`wrote ${Object.keys(golden).length} files to tests/webgpu-golden/`);
  } else {
    const stale = await staleGoldens();
    console.log(stale.length === 0 ? 'the goldens are what the generators write' : `stale: ${stale.join(', ')} (node tests/webgpu-golden.js --write)`);
    process.exitCode = stale.length === 0 ? 0 : 1;
  }
}
