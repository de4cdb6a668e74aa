// src/loader/abi.js is the JS layer's one table of ABI facts; the C side
// states each of them again where C needs it. This holds the two together:
// the codes against the C enums (read from the headers, and as compiled),
// the bytes per value against sizeof as the kernels use it, the block
// formats' C and TypeScript against what src/abi/block-formats.js writes
// from the table (and its layouts against C's), and the export lists
// against the Makefile, exports.c and the built modules.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ALLOCATOR_EXPORTS, BLOCK_FORMAT, BLOCK_FORMATS, CAST_MODE, CAST_MODES, DTYPE, DTYPES } from '../src/loader/abi.js';
import { blockFormatFiles } from '../src/abi/block-formats.js';
import { KERNEL_EXPORTS } from '../src/ops/descriptions.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const source = (path) => readFile(join(repo, path), 'utf8');

/** The constants of the C enum `name` (`enum name {...}` or `typedef enum name {...}`), as { CONSTANT: value }. */
function enumOf(text, name) {
  const body = new RegExp(`enum\\s+${name}\\s*\\{([^}]*)\\}`).exec(text);
  assert.ok(body, `enum ${name} found`);
  const constants = {};
  for (const [, constant, value] of body[1].replace(/\/\*[\s\S]*?\*\//g, '').matchAll(/(\w+)\s*=\s*(-?\d+)/g)) {
    constants[constant] = Number(value);
  }
  return constants;
}

// The C names of each code, in the kernels' enums and in the public header.
const KERNEL_DTYPE = { float32: 'RMSNORM_F32', bfloat16: 'RMSNORM_BF16', float16: 'RMSNORM_F16' };
const PUBLIC_DTYPE = { float32: 'RMSNORM_WASM_FLOAT32', bfloat16: 'RMSNORM_WASM_BFLOAT16', float16: 'RMSNORM_WASM_FLOAT16' };
const KERNEL_CAST = { llama: 'RMSNORM_CAST_LLAMA', gemma: 'RMSNORM_CAST_GEMMA' };
const PUBLIC_CAST = { llama: 'RMSNORM_WASM_CAST_LLAMA', gemma: 'RMSNORM_WASM_CAST_GEMMA' };

test('dtype codes: abi.js, the kernels\' enum and the public header\'s are one table', async () => {
  const kernel = enumOf(await source('src/kernels/float16.h'), 'rmsnorm_dtype');
  const header = enumOf(await source('src/abi/rmsnorm_wasm.h'), 'rmsnorm_wasm_dtype');
  assert.deepEqual(Object.keys(DTYPE), DTYPES, 'DTYPES lists every dtype');
  assert.equal(Object.keys(kernel).length, DTYPES.length, 'no C dtype abi.js lacks');
  assert.equal(Object.keys(header).length, DTYPES.length, 'no public dtype abi.js lacks');
  DTYPES.forEach((name, code) => {
    assert.equal(DTYPE[name].code, code, `DTYPES is in code order (${name})`);
    assert.equal(kernel[KERNEL_DTYPE[name]], code, `${KERNEL_DTYPE[name]}`);
    assert.equal(header[PUBLIC_DTYPE[name]], code, `${PUBLIC_DTYPE[name]}`);
  });
});

/** The C names of a format's constants, in the kernels' header and the public one (q8_K: Q8_K). */
const cName = (name) => name.toUpperCase();

test('block formats: the C and TypeScript files hold what src/abi/block-formats.js writes from the table, and nothing else', async () => {
  const files = await blockFormatFiles();
  assert.deepEqual(files.map(({ path }) => path), ['src/kernels/q8_blocks.h', 'src/abi/rmsnorm_wasm.h', 'src/abi/rmsnorm_wasm.c', 'src/index.d.ts']);
  for (const { path, before, after } of files) assert.equal(before, after, `${path}: run node src/abi/block-formats.js (make build does)`);
  // What the files say, read back: every format's codes, sizes and offsets, and no other.
  assert.deepEqual(Object.keys(BLOCK_FORMAT), BLOCK_FORMATS, 'BLOCK_FORMATS lists every format, in code order');
  const kernelHeader = await source('src/kernels/q8_blocks.h');
  const kernel = enumOf(kernelHeader, 'rmsnorm_q8_format');
  const header = enumOf(await source('src/abi/rmsnorm_wasm.h'), 'rmsnorm_wasm_block_format');
  const written = kernelHeader.slice(kernelHeader.indexOf('/* Block formats: written'), kernelHeader.indexOf('/* End of the written block formats. */'));
  const defines = Object.fromEntries([...written.matchAll(/^#define (\w+) (\d+)$/gm)].map(([, name, value]) => [name, Number(value)]));
  assert.deepEqual(Object.keys(kernel), BLOCK_FORMATS.map((name) => `RMSNORM_${cName(name)}`));
  assert.deepEqual(Object.keys(header), BLOCK_FORMATS.map((name) => `RMSNORM_WASM_${cName(name)}`));
  const expected = { Q8_FORMAT_COUNT: BLOCK_FORMATS.length, Q8_MAX_VALUES: Math.max(...BLOCK_FORMATS.map((name) => BLOCK_FORMAT[name].values)) };
  BLOCK_FORMATS.forEach((name, i) => {
    const { code, values, bytes, fields } = BLOCK_FORMAT[name];
    assert.equal(code, i + 1, `${name}: codes from 1 (0 is the storage dtype)`);
    assert.equal(kernel[`RMSNORM_${cName(name)}`], code);
    assert.equal(header[`RMSNORM_WASM_${cName(name)}`], code);
    expected[`${cName(name)}_VALUES`] = values;
    expected[`${cName(name)}_BYTES`] = bytes;
    for (const [field, { offset }] of Object.entries(fields)) expected[`${cName(name)}_${field.toUpperCase()}`] = offset;
  });
  assert.deepEqual(defines, expected, 'src/kernels/q8_blocks.h\'s constants');
  const union = /export type BlockFormat = ([^;]*);/.exec(await source('src/index.d.ts'))[1];
  assert.deepEqual(union.split(' | '), BLOCK_FORMATS.map((name) => `'${name}'`), 'the .d.ts BlockFormat union');
});

test('block formats: ggml\'s layouts, as the table works them out, are what C makes of the declarations', async () => {
  // Each block as ggml-common.h declares it (and the public header's table
  // shows it), compiled: sizeof and offsetof against the table's bytes and offsets.
  const declarations = [...(await source('src/abi/rmsnorm_wasm.h')).matchAll(/(block_\w+) \{ ([^}]*) \}/g)];
  assert.deepEqual(declarations.map(([, name]) => name), BLOCK_FORMATS.map((name) => `block_${name}`));
  const prints = declarations.map(([, struct], i) => {
    const { fields } = BLOCK_FORMAT[BLOCK_FORMATS[i]];
    return `printf("%zu ${Object.keys(fields).map(() => '%zu').join(' ')}\\n", sizeof(struct ${struct}), ${Object.keys(fields).map((f) => `offsetof(struct ${struct}, ${f})`).join(', ')});`;
  });
  const c = await compiled(`#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
typedef uint16_t ggml_half;
${declarations.map(([, struct, body]) => `struct ${struct} { ${body} };`).join('\n')}
int main(void) {
  ${prints.join('\n  ')}
  return 0;
}
`);
  const lines = c.trim().split('\n');
  BLOCK_FORMATS.forEach((name, i) => {
    const { bytes, fields } = BLOCK_FORMAT[name];
    assert.deepEqual(lines[i].split(' ').map(Number), [bytes, ...Object.values(fields).map(({ offset }) => offset)], `${name}: sizeof, then offsetof each field`);
  });
});

test('cast codes: zero is llama, the JS default, in abi.js and both C enums', async () => {
  const kernel = enumOf(await source('src/kernels/f32-rmsnorm/rmsnorm_f32.h'), 'rmsnorm_cast');
  const header = enumOf(await source('src/abi/rmsnorm_wasm.h'), 'rmsnorm_wasm_cast_mode');
  assert.equal(CAST_MODE.llama, 0);
  assert.deepEqual(Object.keys(CAST_MODE).sort(), [...CAST_MODES].sort(), 'CAST_MODES lists every mode');
  assert.equal(Object.keys(kernel).length, CAST_MODES.length);
  assert.equal(Object.keys(header).length, CAST_MODES.length);
  CAST_MODES.forEach((name, code) => {
    assert.equal(CAST_MODE[name], code, `CAST_MODES is in code order (${name})`);
    assert.equal(kernel[KERNEL_CAST[name]], code, KERNEL_CAST[name]);
    assert.equal(header[PUBLIC_CAST[name]], code, PUBLIC_CAST[name]);
  });
});

/** What a C program built by emcc, as the modules are (with src/kernels/
 * and src/abi/ on the include path), prints when run. */
async function compiled(text) {
  const work = await mkdtemp(join(tmpdir(), 'rmsnorm-wasm-abi-'));
  try {
    const program = join(work, 'abi.c');
    await writeFile(program, text);
    const out = join(work, 'abi.js');
    await run('emcc', ['-O1', '-I', join(repo, 'src', 'kernels'), '-I', join(repo, 'src', 'abi'), program,
      '-sSINGLE_FILE=1', '-sENVIRONMENT=node', '-o', out], { env: { ...process.env, NODE_PATH: '/usr/share/nodejs' } });
    return (await run(process.execPath, [out])).stdout;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

test('bytes per value and the codes, as the C compiled for wasm32 has them', async () => {
  // What the kernels compute with: dtype_size of each code (the one rule
  // the kernels and the C API use), sizeof of the stored types, the enum
  // constants, and each block format's values and bytes by code.
  const formats = BLOCK_FORMATS.map((name) => `RMSNORM_WASM_${cName(name)}`);
  const c = JSON.parse(await compiled(`#include <stdint.h>
#include <stdio.h>
#include "float16.h"
#include "q8_blocks.h"
#include "f32-rmsnorm/rmsnorm_f32.h"
#include "rmsnorm_wasm.h"
int main(void) {
  printf("{\\"dtype_size\\":[%zu,%zu,%zu],", dtype_size(RMSNORM_F32), dtype_size(RMSNORM_BF16), dtype_size(RMSNORM_F16));
  printf("\\"sizeof_float\\":%zu,\\"sizeof_uint16\\":%zu,", sizeof(float), sizeof(uint16_t));
  printf("\\"dtype\\":[%d,%d,%d,%d,%d,%d],", RMSNORM_F32, RMSNORM_BF16, RMSNORM_F16,
         RMSNORM_WASM_FLOAT32, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_FLOAT16);
  printf("\\"cast\\":[%d,%d,%d,%d],", RMSNORM_CAST_LLAMA, RMSNORM_CAST_GEMMA,
         RMSNORM_WASM_CAST_LLAMA, RMSNORM_WASM_CAST_GEMMA);
  const int formats[] = {${formats.join(', ')}};
  printf("\\"formats\\":[");
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
    printf("%s[%d,%zu,%zu,%d]", i == 0 ? "" : ",", formats[i], q8_block_values(formats[i]), q8_block_bytes(formats[i]), q8_known_format(formats[i]));
  }
  printf("],\\"unknown\\":[%d,%d]}\\n", q8_known_format(0), q8_known_format(${BLOCK_FORMATS.length + 1}));
  return 0;
}
`));
  assert.deepEqual(c.dtype_size, DTYPES.map((name) => DTYPE[name].bytes), 'dtype_size of each code is abi.js\'s bytes');
  assert.equal(DTYPE.float32.bytes, c.sizeof_float);
  assert.equal(DTYPE.bfloat16.bytes, c.sizeof_uint16);
  assert.equal(DTYPE.float16.bytes, c.sizeof_uint16);
  const codes = DTYPES.map((name) => DTYPE[name].code);
  assert.deepEqual(c.dtype, [...codes, ...codes]);
  assert.deepEqual(c.cast, [CAST_MODE.llama, CAST_MODE.gemma, CAST_MODE.llama, CAST_MODE.gemma]);
  assert.deepEqual(c.formats, BLOCK_FORMATS.map((name) => [BLOCK_FORMAT[name].code, BLOCK_FORMAT[name].values, BLOCK_FORMAT[name].bytes, 1]),
    'each public code: q8_block_values, q8_block_bytes and q8_known_format as the kernels compute them');
  assert.deepEqual(c.unknown, [0, 0], 'no format 0, none past the last');
});

/** A Makefile variable as make expands it. */
async function makeVariable(name) {
  const { stdout } = await run('make', ['-s', '--no-print-directory', '--eval', `print-abi-variable: ; @echo $(${name})`,
    'print-abi-variable'], { cwd: repo });
  return stdout.trim();
}

const cNames = (names) => names.map((name) => `_${name}`).join(',');

test('exports: abi.js against the Makefile\'s lists and exports.c\'s functions', async () => {
  assert.equal(await makeVariable('KERNEL_EXPORTS'), cNames(KERNEL_EXPORTS));
  assert.equal(await makeVariable('EXPORTS'), cNames([...KERNEL_EXPORTS, ...ALLOCATOR_EXPORTS]));
  const exported = [...(await source('src/abi/exports.c')).matchAll(/EMSCRIPTEN_KEEPALIVE\s+\w+\s+(\w+)\s*\(/g)]
    .map(([, name]) => name);
  assert.deepEqual(exported, [...KERNEL_EXPORTS], 'exports.c defines exactly the kernels the descriptions call (the converters among them), in order');
});

test('exports: each built module exports what abi.js says, and nothing else callable', async () => {
  const functionsOf = async (file) => {
    const module = await WebAssembly.compile(await readFile(join(repo, 'build', file)));
    return WebAssembly.Module.exports(module).filter(({ kind }) => kind === 'function').map(({ name }) => name)
      .filter((name) => !name.startsWith('_') && !name.startsWith('emscripten_') && !name.startsWith('stack'));
  };
  for (const build of ['simd', 'scalar']) {
    assert.deepEqual((await functionsOf(`rmsnorm-${build}.wasm`)).sort(),
      [...KERNEL_EXPORTS, ...ALLOCATOR_EXPORTS].sort(), `rmsnorm-${build}.wasm`);
    assert.deepEqual((await functionsOf(`rmsnorm-${build}-imported.wasm`)).sort(), [...KERNEL_EXPORTS].sort(),
      `rmsnorm-${build}-imported.wasm: the kernels and converters, no allocator`);
  }
});

/** A module's imports and exports read from its bytes (the memory64 modules do not compile in Node 20):
 * { imports: [{ module, name, kind, flags }], exports: [{ name, kind }] }. */
function sectionsOf(bytes) {
  let at = 8;
  const leb = () => {
    let value = 0;
    let shift = 0;
    let byte;
    do {
      byte = bytes[at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  const name = () => {
    const length = leb();
    const text = Buffer.from(bytes.subarray(at, at + length)).toString('utf8');
    at += length;
    return text;
  };
  const KINDS = ['function', 'table', 'memory', 'global'];
  const result = { imports: [], exports: [], sections: [] };
  while (at < bytes.length) {
    const id = bytes[at++];
    const size = leb();
    const end = at + size;
    result.sections.push(id);
    if (id === 2 || id === 7) {
      for (let n = leb(); n > 0; n--) {
        if (id === 2) {
          const entry = { module: name(), name: name(), kind: KINDS[bytes[at++]] };
          assert.equal(entry.kind, 'memory', `${entry.module}.${entry.name}: the only import is the memory`);
          entry.flags = bytes[at++];
          entry.minimum = leb();
          result.imports.push(entry);
        } else {
          result.exports.push({ name: name(), kind: KINDS[bytes[at++]] });
          leb();
        }
      }
    }
    at = end;
  }
  return result;
}

test('exports: the memory64 modules export the kernels, the converters and stackRestore, and import only a memory64 memory', async () => {
  assert.equal(await makeVariable('WASM64_EXPORTS'), [...KERNEL_EXPORTS, 'stackRestore'].join(' '));
  for (const build of ['simd', 'scalar']) {
    const { imports, exports, sections } = sectionsOf(await readFile(join(repo, 'build', `rmsnorm-${build}-memory64.wasm`)));
    assert.deepEqual(imports, [{ module: 'env', name: 'memory', kind: 'memory', flags: 0x04, minimum: 1 }],
      `rmsnorm-${build}-memory64.wasm: a memory64 memory of at least one page, no maximum`);
    assert.deepEqual(exports.map(({ name, kind }) => `${name} ${kind}`).sort(),
      [...KERNEL_EXPORTS, 'stackRestore'].map((name) => `${name} function`).sort(), `rmsnorm-${build}-memory64.wasm`);
    assert.ok(!sections.includes(11), `rmsnorm-${build}-memory64.wasm: no data section`);
  }
});
