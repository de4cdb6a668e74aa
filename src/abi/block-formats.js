// The block formats' facts where C and TypeScript state them, written from
// the one table of them (BLOCK_FORMAT, src/loader/abi.js): in each file
// below, the lines between its two marker lines, and nothing else. `make
// build` runs this (`node src/abi/block-formats.js`) before it compiles, so
// a row added to the table is in every enum, constant, message and union
// of the build; `--check` changes nothing and fails if a file differs from
// what it would write (tests/abi.test.js). A build-time tool: the package
// does not ship it.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { BLOCK_FORMAT, BLOCK_FORMATS, FIELD_BYTES } from '../loader/abi.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const TOOL = 'src/abi/block-formats.js';

/** Each field type (FIELD_BYTES) as ggml-common.h declares it. */
const C_TYPE = { int8: 'int8_t', int16: 'int16_t', float16: 'ggml_half', float32: 'float' };

const rows = BLOCK_FORMATS.map((name) => ({ name, C: name.toUpperCase(), ...BLOCK_FORMAT[name] }));
const fieldsOf = (row) => Object.entries(row.fields).map(([name, field]) => ({ name, ...field }));

/** What every file below takes for granted of the table: codes 1, 2, … in
 * order (0 is the storage dtype; the C checks a code by its range), and
 * each field on a multiple of its type's bytes, as a C struct has it (so
 * the packed offsets are ggml's); every block's values a divisor of the
 * largest block's. */
function checkTable() {
  const largest = Math.max(...rows.map((row) => row.values));
  rows.forEach((row, i) => {
    if (row.code !== i + 1) throw new Error(`${row.name}: code ${row.code}, expected ${i + 1} (codes run from 1 in table order)`);
    if (!(Number.isInteger(row.values) && row.values > 0 && largest % row.values === 0)) {
      throw new Error(`${row.name}: values ${row.values}, which must divide the largest block's (the norm's row drivers quantize in chunks of it)`);
    }
    for (const field of fieldsOf(row)) {
      if (C_TYPE[field.type] === undefined || FIELD_BYTES[field.type] === undefined) {
        throw new Error(`${row.name}.${field.name}: the type ${field.type} needs its bytes in FIELD_BYTES (src/loader/abi.js) and its C name in C_TYPE (${TOOL})`);
      }
      if (field.offset % FIELD_BYTES[field.type] !== 0) throw new Error(`${row.name}.${field.name}: offset ${field.offset} would be padded in C`);
    }
  });
}

/** ggml's declaration of a format's block: `block_q8_0 { ggml_half d; int8_t qs[32]; }`. */
const declaration = (row) =>
  `block_${row.name} { ${fieldsOf(row).map((f) => `${C_TYPE[f.type]} ${f.name}${f.count > 1 ? `[${f.count}]` : ''};`).join(' ')} }`;

/** The formats grouped by `key` (values, bytes), in table order of each group's first format. */
function groupsBy(key) {
  const groups = new Map();
  for (const row of rows) groups.set(row[key], [...(groups.get(row[key]) ?? []), row]);
  return [...groups.values()];
}

/** A C function of a format returning its `key`: a conditional for every
 * format but those of the most common value (the last such group on a
 * tie), which is the fallback; called with known formats only (the callers
 * check). Conditional expressions, not a switch: a switch of four or more
 * values becomes a table in the data segment, which the imported-memory
 * modules must not have. Laid out as clang-format lays it out. */
function cFunction(name, key, macro) {
  const groups = groupsBy(key);
  const common = groups.reduce((best, group) => (group.length >= best.length ? group : best));
  const choices = rows.filter((row) => !common.includes(row)).map((row) => [`format == RMSNORM_${row.C}`, `${row.C}_${macro}`]);
  const fallback = `${common[0].C}_${macro}`;
  const line = `  return ${choices.map(([test, value]) => `${test} ? ${value} : `).join('')}${fallback};`;
  let body = line;
  if (line.length > 100) {
    const width = Math.max(...choices.map(([test], i) => test.length + (i === 0 ? 0 : 2)));
    body = choices.map(([test, value], i) => (i === 0 ? `  return ${test.padEnd(width)} ? ${value}` : `         : ${test.padEnd(width - 2)} ? ${value}`))
      .concat(`${' '.repeat(9 + width + 1)}: ${fallback};`).join('\n');
  }
  return `static inline size_t ${name}(int format) {\n${body}\n}\n`;
}

/** A C macro whose body is the string pieces, one a line (adjacent
 * literals: clang-format keeps them so), the escaped newlines aligned as
 * clang-format aligns them. */
function cStringMacro(name, pieces) {
  const lines = [`#define ${name}`, ...pieces.map((piece) => `  "${piece}"`)];
  const width = Math.max(...lines.slice(0, -1).map((line) => line.length)) + 1;
  return lines.map((line, i) => (i < lines.length - 1 ? `${line.padEnd(width)}\\` : line)).join('\n') + '\n';
}

const publicName = (row) => `RMSNORM_WASM_${row.C}`;

/** "a", "a and b", "a, b and c". */
const andList = (items) => (items.length === 1 ? items[0] : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

/** Each file's region: where it is, its markers and its lines. */
const REGIONS = [
  {
    path: 'src/kernels/q8_blocks.h',
    comment: 'c',
    text: () => `/* The formats, as the C ABI numbers them (0: the storage dtype, no blocks),
 * and each one's values and bytes a block and its fields' byte offsets. */
enum rmsnorm_q8_format {
${rows.map((row) => `  RMSNORM_${row.C} = ${row.code},\n`).join('')}};
#define Q8_FORMAT_COUNT ${rows.length}
${rows.map((row) => [`#define ${row.C}_VALUES ${row.values}`, `#define ${row.C}_BYTES ${row.bytes}`,
    ...fieldsOf(row).map((f) => `#define ${row.C}_${f.name.toUpperCase()} ${f.offset}`)].join('\n')).join('\n')}
/* The most values a block holds. */
#define Q8_MAX_VALUES ${Math.max(...rows.map((row) => row.values))}

${cFunction('q8_block_values', 'values', 'VALUES')}
${cFunction('q8_block_bytes', 'bytes', 'BYTES')}`,
  },
  {
    path: 'src/abi/rmsnorm_wasm.h',
    comment: 'c',
    text: () => {
      const declarations = rows.map(declaration);
      const width = Math.max(...declarations.map((d) => d.length));
      const nameWidth = Math.max(...rows.map((row) => row.C.length));
      return `/* ggml's 8-bit block formats (ggml-common.h), which a norm's output may
 * take instead of its storage dtype (rmsnorm_wasm_rmsnorm_q8), a block
 * holding the values given, in the bytes given:
${rows.map((row, i) => ` *   ${row.C.padEnd(nameWidth)}  ${declarations[i].padEnd(width)}  ${String(row.values).padStart(3)} values ${String(row.bytes).padStart(3)} bytes`).join('\n')} */
typedef enum rmsnorm_wasm_block_format {
${rows.map((row) => `  ${publicName(row)} = ${row.code},\n`).join('')}} rmsnorm_wasm_block_format;
`;
    },
  },
  {
    path: 'src/abi/rmsnorm_wasm.c',
    comment: 'c',
    text: () => `/* The formats and their block sizes, as the status messages name them. */
${cStringMacro('FORMAT_NAMES', rows.map((row, i) => `${i === 0 ? '' : i < rows.length - 1 ? ', ' : ' or '}${publicName(row)}`))}${cStringMacro('BLOCK_SIZES',
  groupsBy('values').map((group, i, all) => `${group[0].values} for ${andList(group.map(publicName))}${i < all.length - 1 ? ', ' : ''}`))}`,
  },
  {
    path: 'src/index.d.ts',
    comment: 'ts',
    text: () => `/**
 * ggml's 8-bit block formats, the input ggml's \`mul_mat\` quantizes its
 * activations to:
${rows.map((row) => ` * - \`'${row.name}'\`: \`${declaration(row)}\`, ${row.values} values in ${row.bytes} bytes`).join('\n')}
 */
export type BlockFormat = ${rows.map((row) => `'${row.name}'`).join(' | ')};
`,
  },
];

const MARKS = {
  c: [`/* Block formats: written by ${TOOL} from src/loader/abi.js. */`, '/* End of the written block formats. */'],
  ts: [`// Block formats: written by ${TOOL} from src/loader/abi.js.`, '// End of the written block formats.'],
};

/** `file`'s text with its region's lines replaced by `lines`. */
function withRegion(path, file, comment, lines) {
  const [begin, end] = MARKS[comment];
  const from = file.indexOf(`${begin}\n`);
  const to = file.indexOf(`${end}\n`);
  if (from < 0 || to < from || file.indexOf(`${begin}\n`, from + 1) >= 0) {
    throw new Error(`${path}: expected the lines "${begin}" and, after it, "${end}", once each`);
  }
  return file.slice(0, from + begin.length + 1) + lines + file.slice(to);
}

/** Each file as this tool writes it: [{ path, before, after }]. */
export async function blockFormatFiles() {
  checkTable();
  const files = [];
  for (const region of REGIONS) {
    const before = await readFile(`${repo}/${region.path}`, 'utf8');
    files.push({ path: region.path, before, after: withRegion(region.path, before, region.comment, region.text()) });
  }
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const stale = [];
  for (const { path, before, after } of await blockFormatFiles()) {
    if (before === after) continue;
    stale.push(path);
    if (!check) await writeFile(`${repo}/${path}`, after);
  }
  if (check && stale.length > 0) {
    console.error(`${stale.join(', ')}: not as src/loader/abi.js's BLOCK_FORMAT writes them: run node ${TOOL}`);
    process.exit(1);
  }
  if (!check && stale.length > 0) console.log(`${TOOL}: wrote ${stale.join(', ')}`);
}
