// What every program (./programs/) lays its calls out with: which
// bindings a checked call's (./args.js) roles share and how each is
// declared, how many invocations share a row, the dispatch's size, and a
// variant's key. Pure arithmetic on the call's record: the same call
// always gets the same layout, and the same variant the same pipeline.
import { ceil, Float32Array, isArray, keys, List, log2, max, min, RangeError, Uint32Array } from '../../loader/intrinsics.js';

const MAX_GROUPS = 65535; // maxComputeWorkgroupsPerDimension's guaranteed value

/** [x, y] workgroups for `groups` in all, within the per-dimension limit. */
export function dispatchSize(fn, groups, rows) {
  const size = new List(2);
  size[0] = min(groups, MAX_GROUPS);
  size[1] = ceil(groups / MAX_GROUPS);
  if (size[1] > MAX_GROUPS) throw new RangeError(`${fn}: params.rows is too large (${rows})`);
  return size;
}

/** A binding of bytes [start, end) of a buffer of `bufferSize` bytes
 * (of the roles `label`): within the buffer, whose whole 4-byte words
 * WebGPU binds, and within the device's maxStorageBufferBindingSize. */
function checkBindingSpan(fn, label, bufferSize, start, end, maxSize) {
  if (end > bufferSize) {
    throw new RangeError(`${fn}: the buffer of ${label} is ${bufferSize} bytes; WebGPU binds whole 4-byte words, so it must extend to byte ${end}`);
  }
  if (end - start > maxSize) {
    throw new RangeError(`${fn}: ${label} span ${end - start} bytes of one buffer, beyond the device's maxStorageBufferBindingSize (${maxSize})`);
  }
}

/**
 * The bindings of the roles named in `names` (of `measured`): roles in one
 * GPUBuffer whose bound ranges (from the offset alignment below their
 * first byte to the 4-byte word after their last) would meet share one,
 * because WebGPU forbids a writable binding that overlaps another in one
 * dispatch. A binding is read-only when nothing in its buffer is written
 * by the dispatch (a buffer bound writable and read-only in one dispatch
 * is a usage conflict), and atomic when a 16-bit role written in it has a
 * row that starts or ends inside a word (`pairs` below), or a role of
 * bytes (ggml blocks) is written in it. With `vectors`,
 * a binding of per-row roles and weights only is read a vector at a time
 * where every group of four values starts on one (a statistic, one value
 * a row, gains nothing by it, and each layout is a pipeline). Returns
 * { bindings: [{ buffer, offset, size, access, atomic, names }], roles:
 * { name: { binding (1 on), offset (elements from the binding's start), pairs } } }.
 */
export function bindingsOf(fn, limits, measured, names, rows, dim, stride, vectors = true) {
  const { align, maxSize } = limits;
  let groups = new List();
  for (let i = 0; i < names.length; i++) {
    const m = measured[names[i]];
    const g = { __proto__: null, buffer: m.buffer, start: m.start - (m.start % align), end: max(ceil(m.end / 4) * 4, m.start - (m.start % align) + 4), names: new List(1) };
    g.names[0] = names[i];
    groups[groups.length] = g;
  }
  for (let merged = true; merged;) {
    merged = false;
    for (let i = 0; i < groups.length && !merged; i++) {
      for (let j = i + 1; j < groups.length && !merged; j++) {
        const a = groups[i];
        const b = groups[j];
        if (a.buffer === b.buffer && a.start < b.end && b.start < a.end) {
          a.start = min(a.start, b.start);
          a.end = max(a.end, b.end);
          for (let k = 0; k < b.names.length; k++) a.names[a.names.length] = b.names[k];
          const rest = new List();
          for (let k = 0; k < groups.length; k++) if (k !== j) rest[rest.length] = groups[k];
          groups = rest;
          merged = true;
        }
      }
    }
  }
  const roles = { __proto__: null };
  const bindings = new List(groups.length);
  for (let k = 0; k < groups.length; k++) {
    const g = groups[k];
    let label = '';
    let writes = false;
    let atomic = false;
    let words = 4; // the vector a group of four values is, if every role's groups start on one
    for (let n = 0; n < g.names.length; n++) {
      const m = measured[g.names[n]];
      label += `${n === 0 ? '' : ', '}${m.name}`;
      const offset = (m.start - g.start) / m.bytes;
      // 16-bit rows that start and end on word boundaries are whole words;
      // bytes written (ggml blocks) are written a byte-masked word at a time.
      const pairs = m.bytes === 2 && offset % 2 === 0 && (rows <= 1 || stride % 2 === 0) && (!m.writes || dim % 2 === 0);
      if (m.writes && m.bytes < 4 && !pairs) atomic = true;
      const statistic = g.names[n] === 'rstd' || g.names[n] === 'mean';
      const aligned = vectors && !statistic && offset % 4 === 0 && (rows <= 1 || m.runs === 1 || stride % 4 === 0) && (m.bytes === 4 || pairs);
      const vector = m.bytes === 4 ? 4 : 2;
      words = aligned && (words === 4 || words === vector) && (n === 0 || words === vector) ? vector : 1;
      writes = writes || m.writes;
      roles[g.names[n]] = { __proto__: null, binding: k + 1, offset, pairs };
    }
    // A vector binding reads whole vectors: its size rounds up to one, which the buffer must hold.
    const vectorEnd = g.start + ceil((g.end - g.start) / (words * 4)) * words * 4;
    const size = measured[g.names[0]].bufferSize; // every role of a group is in one buffer
    if (words > 1 && vectorEnd <= size) g.end = vectorEnd;
    else words = 1;
    checkBindingSpan(fn, label, size, g.start, g.end, maxSize);
    bindings[k] = {
      __proto__: null, buffer: g.buffer, offset: g.start, size: g.end - g.start, access: writes ? 'read_write' : 'read', atomic,
      words: atomic ? 1 : words, names: g.names,
    };
  }
  for (let k = 0; k < bindings.length; k++) {
    for (let j = 0; j < bindings.length; j++) {
      if (bindings[j].buffer === bindings[k].buffer && bindings[j].access === 'read_write') bindings[k].access = 'read_write';
    }
  }
  return { __proto__: null, bindings, roles };
}

/** The longest row (in 256-value blocks) SwiftShader gives one
 * invocation when the call has too few rows to fill its cores. */
const SWIFTSHADER_SERIAL_BLOCKS = 6;

/**
 * Invocations a row, on `adapter` ('gpu', 'swiftshader' or 'cpu', another
 * software adapter): 1 keeps a row's four lane groups in one invocation
 * (no barriers: the fastest on a CPU adapter, whose few cores the rows
 * alone fill, and on SwiftShader for a short row too, where a team's
 * barriers cost more than they share; its pipeline is the smaller,
 * compiled sooner); 4, 16 or 64 share a row's blocks, as many as its
 * first blocks have lane groups, so that short calls spread over more
 * invocations. `invocationsPerRow` (an option of createGpuKernels) fixes it.
 */
export function teamOf(rows, dim, adapter, invocationsPerRow) {
  if (invocationsPerRow !== 'auto') return invocationsPerRow;
  const blocks = ceil(dim / 256);
  if (adapter !== 'gpu' && rows >= 16) return 1;
  if (adapter === 'swiftshader' && blocks <= SWIFTSHADER_SERIAL_BLOCKS) return 1;
  return blocks >= 16 ? 64 : blocks >= 4 ? 16 : 4;
}

/** The fast path's bound on |x|: every square and every sum of dim of them
 * stays below 2^127 (src/webgpu/programs/rmsnorm-shader.js, fast_ok). */
export function fastBound(dim) {
  const hx = min(50, (126 - ceil(log2(dim))) >> 1);
  return (127 + hx) * 0x800000;
}

// A variant holds only what its shader is written from: of each binding its
// declaration, of each role its binding and whether it reads whole words.
// (Offsets, sizes and buffers are the call's, in its uniforms and bind group.)
export function declarationsOf(bindings) {
  const declared = new List(bindings.length);
  for (let i = 0; i < bindings.length; i++) {
    const { access, atomic, words } = bindings[i];
    declared[i] = { __proto__: null, access, atomic, words };
  }
  return declared;
}
/** The bits of a float32 value, for a uniform slot. */
export const bitsOfFloat = (v) => {
  f32[0] = v;
  return u32[0];
};
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export const shaderRole = (role) => (role === undefined || role === null ? null : { __proto__: null, binding: role.binding, pairs: role.pairs });

/**
 * The key of a variant: every field it holds, in one canonical
 * serialization (a record's fields in name order), so that equal keys are
 * equal variants, and a generator, which reads only its variant, writes
 * them one shader. Pipelines are cached by it (./kernels.js).
 */
export function keyOf(value) {
  if (value === null) return '-';
  if (typeof value !== 'object') return `${value}`;
  let key = '';
  if (isArray(value)) {
    for (let i = 0; i < value.length; i++) key += `${i === 0 ? '' : ','}${keyOf(value[i])}`;
    return `[${key}]`;
  }
  const names = keys(value);
  // Insertion sort: a record has a handful of fields.
  for (let i = 1; i < names.length; i++) {
    const name = names[i];
    let j = i - 1;
    for (; j >= 0 && names[j] > name; j--) names[j + 1] = names[j];
    names[j + 1] = name;
  }
  for (let i = 0; i < names.length; i++) key += `${i === 0 ? '' : ' '}${names[i]}=${keyOf(value[names[i]])}`;
  return `{${key}}`;
}

