// A call resolved from its function's description (./descriptions.js):
// options read (./options.js), arrays measured (./arrays.js), sizes and
// values checked, then the overlap rule (./overlap.js), always in that
// order and before anything is written. The wasm API and the reference
// both resolve here, so both throw the same error for the same mistake.

import { BLOCK_FORMAT, BLOCK_FORMATS, CAST_MODE, DTYPE, DTYPES } from '../loader/abi.js';
import { defineProperty, freeze, isView, keys, kindOf, List, ownWeakMap, RangeError, setPrototypeOf, TypeError } from '../loader/intrinsics.js';
import { tensorHolding } from '../loader/memory.js';
import { measure, newOutput, renewOutput, stillHolds, weightDtypeOf } from './arrays.js';
import {
  BLOCK_FORMAT_CHOICES, blockRowBytes, castModeOption, dtypeOption, float32Option, headsOption, headStrideOption, lastRead, layRows, missing, oneOf, oneRowStride, optionReader,
  readShape, requireWeightFor, resolveDim, resolveStride, rowSpan, rowsOf, template,
} from './options.js';
import { checkOverlaps } from './overlap.js';

export const ROW = 0, STAT = 1, ONCE = 2; // values a row: dim, one, or dim for the whole call
// A row of ggml blocks: a per-row output whose rows are (dim / block) blocks
// of bytes, packed one after another whatever the row stride (ggml's src1
// layout). An output that may take a block format (`blocks` in its
// description, chosen by options.outDtype) has this `per` in the blocked
// form of its description (define).
export const BLOCKS = 3;
export const NONE = 0, IN = 1, OUT = 2, INOUT = 3;

/** A description made ready for calls: its slots numbered and resolved.
 * With an output that may be blocks, its blocked form too (`blocked`):
 * the same description with that output a row of blocks, over nothing
 * (blocks are never written in place). */
export function define(name, spec) {
  const names = keys(spec.arrays);
  let blocks = false;
  for (let i = 0; i < names.length; i++) if (spec.arrays[names[i]].blocks === true) blocks = true;
  return definition(name, spec, false, blocks ? definition(name, spec, true) : null);
}

function definition(name, spec, asBlocks, blocked = null) {
  const names = keys(spec.arrays);
  const index = { __proto__: null };
  const slots = new List(names.length);
  const pairs = new List(); // (i, j) pairs the overlap rule compares: one of them written, neither unread and unwritten
  const paramSlots = new List();
  const optionSlots = new List();
  for (let i = 0; i < names.length; i++) {
    const s = spec.arrays[names[i]];
    const isBlocks = asBlocks && s.blocks === true;
    const per = isBlocks ? BLOCKS : s.per;
    index[names[i]] = i;
    slots[i] = freeze({
      key: names[i], name: s.param !== undefined || s.made !== undefined ? names[i] : `options.${names[i]}`,
      param: s.param ?? -1, per, row: per === ROW, dir: s.dir, writes: (s.dir & OUT) !== 0, reads: (s.dir & IN) !== 0,
      dtype: isBlocks ? 'blocks' : s.dtype ?? (s.per === STAT ? 'float32' : 'storage'), nullable: s.nullable === true,
      over: s.over === undefined || isBlocks ? -1 : names.indexOf(s.over), result: s.result === true,
      made: s.made === undefined ? -1 : names.indexOf(s.made), scratch: s.scratch === true,
    });
    if (s.param !== undefined) paramSlots[paramSlots.length] = i;
    else if (s.made === undefined) optionSlots[optionSlots.length] = i;
  }
  for (let i = 0; i < slots.length; i++) {
    for (let j = i + 1; j < slots.length; j++) {
      if ((!slots[i].writes && !slots[j].writes) || slots[i].dir === NONE || slots[j].dir === NONE) continue;
      pairs[pairs.length] = i;
      pairs[pairs.length] = j;
    }
  }
  const results = new List(); // the slots a call makes when not given
  for (let i = 0; i < slots.length; i++) if (slots[i].result) results[results.length] = i;
  let signature = '(';
  for (let k = 0; k < spec.params.length; k++) signature += `${spec.params[k]}, `;
  return freeze({
    name, params: spec.params, options: spec.options, slots, keys: names, index, returns: spec.returns,
    exports: spec.exports, kernel: spec.kernel, readOptions: optionReader(spec.options),
    pointers: template(names, 0), given: template(names, null), pairs, remembered: new Remembered(),
    together: spec.together === undefined ? null : [index[spec.together[0]], index[spec.together[1]]],
    hasDtype: 'dtype' in spec.options, hasCastMode: 'castMode' in spec.options, hasHeads: 'heads' in spec.options, elementwise: spec.elementwise === true,
    blockwise: spec.blockwise === true, blocked, formatOption: spec.formatOption ?? 'outDtype',
    x: index.x, weight: index.weight ?? -1, bias: index.bias ?? -1, weightAt: spec.arrays.weight?.param ?? -1,
    paramSlots, optionSlots, results, signature: `${signature}options?)`,
    returnSlots: typeof spec.returns === 'string' ? index[spec.returns] : spec.returns.map((key) => index[key]),
  });
}

/**
 * A call of a description on an instance memory that had no shape: its
 * arguments and options as read, and its resolution. A call with the same
 * arguments and option values, every record still true of its array,
 * resolves to the same checked call: a tensor's record never changes while
 * it lives, nor a view's buffer, offset or kind. One is kept per key array
 * (the weight, else x), so the calls of an engine's decode loop, every
 * layer's with its own weight, are each checked once, then only compared.
 * A call that makes its result is remembered too: only its new result
 * differs from one call to the next (makeResults).
 */
class LastCall {
  constructor(key) {
    this.key = key;
    this.call = null;
    this.memory = null;
    this.values = [undefined, undefined, undefined, undefined];
    this.opts = null;
    this.count = 0;
  }
}
setPrototypeOf(LastCall.prototype, null);

/** A description's remembered calls by key, and the one used last (looked up without the map). */
class Remembered {
  constructor() {
    this.last = null;
    this.byKey = ownWeakMap();
  }
}
setPrototypeOf(Remembered.prototype, null);

/** The key array of a call: its weight, else its x. */
const keyOf = (x, weight) => weight ?? x;

/** Whether this call's parameters a[, b[, c[, d]]] (n of them; its options
 * read as the last ones) are those of `last`. */
function isLast(last, memory, n, a, b, c, d) {
  const v = last.values;
  if (last.call === null || last.memory !== memory || a !== v[0] || (n > 1 && b !== v[1]) || (n > 2 && c !== v[2]) || (n > 3 && d !== v[3])) return false;
  return allStillHold(last.call);
}

/** Whether every record of a checked call still describes its array (stillHolds). */
export function allStillHold(call) {
  const { records } = call;
  for (let i = 0; i < records.length; i++) if (records[i] !== null && !stillHolds(records[i])) return false;
  return true;
}

function remember(op, call, values, opts, count, memory) {
  const { records } = call;
  // Not a call on an empty view, which cannot tell detached from empty.
  for (let i = 0; i < records.length; i++) if (records[i] !== null && records[i].length === 0) return;
  const key = keyOf(values[0], op.weightAt < 0 ? undefined : values[op.weightAt]); // a measured array: an object
  const { remembered } = op;
  let last = remembered.byKey.get(key);
  if (last === undefined) {
    last = new LastCall(key);
    remembered.byKey.set(key, last);
  }
  last.call = null; // while it is written
  for (let k = 0; k < op.params.length; k++) last.values[k] = values[k];
  last.opts = opts;
  last.count = count;
  last.memory = memory;
  last.call = call;
  remembered.last = last;
}

/** One checked call: the kernel's terms, and a record per slot (null where none). */
class Call {
  constructor(fn, op) {
    this.fn = fn;
    this.op = op;
    this.rows = 0;
    this.dim = 0;
    this.stride = 0; // values from one row's start to the next's, in the per-row arrays (with heads: one token's to the next's)
    this.heads = 1; // rows a token holds (options.heads), headStride apart: rows (t, h) in that order, t·heads + h
    this.headStride = 0;
    this.tokens = 0; // rows / heads
    this.kernelStride = 0; // the stride of the rows one kernel call is given: stride, or with heads, headStride
    this.length = 0; // x.length: the length of every per-row array
    this.eps = 0;
    this.dtype = 'float32';
    this.weightDtype = null;
    this.castMode = 'llama';
    this.weightOffset = 0;
    // The three above as the kernels' codes (src/loader/abi.js), looked up once a call, not at each kernel call.
    this.dtypeCode = 0;
    this.weightDtypeCode = 0;
    this.castModeCode = 0;
    this.outDtype = null; // a block format (options.outDtype), or null for the storage dtype
    this.outFormatCode = 0; // its code (src/loader/abi.js), 0 for none
    this.blockRowBytes = 0; // bytes a row of blocks
    this.mayAlias = false;
    this.makes = false; // whether some result is made by the call (makeResults, at each run)
    this.shaped = false; // whether options.shape was given (such a call is not remembered: the shape is an array read value by value)
    this.plan = null; // the runner's (src/api/run.js)
    this.records = new List(op.slots.length);
    for (let i = 0; i < op.slots.length; i++) this.records[i] = null;
  }

  /** The caller's record for slot `key`, null where not given. */
  given(key) {
    const record = this.records[this.op.index[key]];
    return record === null || record.owned ? null : record;
  }
}
// Fields are plain assignments (fast), and the prototype ends here: no
// setter a page puts on Object.prototype runs for them.
setPrototypeOf(Call.prototype, null);

/** The options argument of fn(a, b, c, d, e) for a function of n parameters. */
const optionsArgument = (n, a, b, c, d, e) => (n === 1 ? b : n === 2 ? c : n === 3 ? d : e);

/**
 * Resolves `op` called as fn(a, b, c, d, e) (its parameters, then its
 * options). `memory`, the instance memory the call will run in (undefined
 * for the reference), adopts each record once all are checked: it refuses
 * what it cannot take and claims what lies in it (src/loader/memory.js).
 * The call is remembered (LastCall) for the next one like it.
 */
export function resolve(op, fn, memory, a, b, c, d, e) {
  const { remembered } = op;
  const n = op.params.length;
  let last = memory === undefined ? null : remembered.last;
  if (last !== null) {
    const key = keyOf(a, op.weightAt === 1 ? b : op.weightAt === 2 ? c : undefined);
    if (last.key !== key) last = remembered.byKey.get(key) ?? null; // a key of no object is in no WeakMap
  }
  const previous = last === null ? undefined : last.opts;
  const opts = op.readOptions(fn, optionsArgument(n, a, b, c, d, e), 'options', previous, last === null ? -1 : last.count);
  // (A getter may have called the API: then this key's last call may be another one.)
  if (last !== null && opts === previous && last.opts === previous && isLast(last, memory, n, a, b, c, d)) {
    remembered.last = last;
    return last.call;
  }
  const values = [a, b, c, d, e];
  const call = check(op, fn, memory, opts, values);
  if (memory !== undefined && !call.shaped) remember(op, call, values, opts, lastRead.count, memory);
  return call;
}

/** `op` called as fn(a, b, c, d, e), checked, for a prepared call (src/api/functions.js): never remembered. */
export function resolveOnce(op, fn, memory, a, b, c, d, e) {
  const opts = op.readOptions(fn, optionsArgument(op.params.length, a, b, c, d, e));
  return check(op, fn, memory, opts, [a, b, c, d, e]);
}

/** What the call's dtype is: options.dtype, else float16 for a Float16Array x, else float32
 * (a converter's must be 16-bit, named unless x is a Float16Array). */
function dtypeOf(op, fn, opts, x) {
  if (op.blockwise) return 'float32';
  const inferred = op.slots[op.x].dtype === 'storage' && isView(x) && kindOf(x) === 'Float16Array' ? 'float16' : undefined;
  if (!op.elementwise) return op.hasDtype ? dtypeOption(fn, opts.dtype, inferred ?? 'float32') : 'float32';
  if (opts.dtype === undefined && inferred === undefined) {
    throw new TypeError(`${fn}: options.dtype is required: 'bfloat16' or 'float16', the 16-bit format of the bits`);
  }
  return oneOf(fn, 'options.dtype', opts.dtype, SIXTEEN_BIT, inferred);
}

const SIXTEEN_BIT = ['bfloat16', 'float16'];

/** The block format of the call's blocked output: options.outDtype's, or
 * null for the storage dtype (which it may also name; only a description
 * with a blocked form has the option); a blockwise description's is the
 * option its formatOption names (the quantizer's options.dtype), required. */
function outFormatOf(op, fn, opts, dtype) {
  if (op.blockwise) {
    const format = opts[op.formatOption];
    if (format === undefined) throw new TypeError(`${fn}: options.${op.formatOption} is required: ${BLOCK_FORMAT_CHOICES}, the block format`);
    return oneOf(fn, `options.${op.formatOption}`, format, BLOCK_FORMATS, undefined);
  }
  return blockOutput(op, fn, opts, 'options', dtype);
}

/** The block format a call of `op` writes its output as: `given.outDtype`
 * (of the options or params record `given`, named `where`), or null for the
 * storage dtype, which it may also name. Only a description with a blocked
 * form has the option: its record is read for no other (reading it would
 * reach Object.prototype). */
export function blockOutput(op, fn, given, where, dtype) {
  if (op.blocked === null) return null;
  const { outDtype } = given;
  if (outDtype === undefined || outDtype === dtype) return null;
  return oneOf(fn, `${where}.outDtype`, outDtype, OUT_DTYPES[dtype], null);
}

/** The dtypes options.outDtype may name, by storage dtype: its own, or a block format. */
export const OUT_DTYPES = { __proto__: null };
for (let i = 0; i < DTYPES.length; i++) OUT_DTYPES[DTYPES[i]] = freeze([DTYPES[i]].concat(BLOCK_FORMATS));

/** A call checked from its options as read. */
function check(original, fn, memory, opts, values) {
  // (A record has only its description's options: reading another would reach Object.prototype.)
  const shape = original.elementwise || original.blockwise ? undefined : readShape(fn, opts.shape);
  const dtype = dtypeOf(original, fn, opts, values[0]);
  const outDtype = outFormatOf(original, fn, opts, dtype);
  const op = outDtype === null ? original : original.blocked;
  const { slots, options: defaults } = op;
  const call = new Call(fn, op);
  call.shaped = shape !== undefined;
  call.dtype = dtype;
  call.outDtype = outDtype;
  const { records } = call;
  // What a parameter given something that is no array adds to its message (./arrays.js): the signature.
  const { signature } = op;
  // The parameters, in slot order.
  const { paramSlots, optionSlots } = op;
  for (let k = 0; k < paramSlots.length; k++) {
    const i = paramSlots[k];
    const slot = slots[i];
    const value = values[slot.param];
    let valueDtype = slot.dtype === 'storage' ? dtype : slot.dtype;
    let of = slot.dtype === 'storage' ? 'dtype' : '';
    let named = slot.dtype === 'storage' && op.hasDtype && opts.dtype !== undefined;
    if (slot.dtype === 'weight') {
      call.weightDtype = weightDtypeOf(fn, value, opts.weightDtype, dtype, signature);
      valueDtype = call.weightDtype;
      of = 'weightDtype';
      named = opts.weightDtype !== undefined;
    } else if (value === undefined && slot.nullable) {
      throw new TypeError(`${fn}: ${slot.name} must be a Float32Array or null (for no ${slot.name}), got undefined${missing(fn, signature)}`);
    } else if (value === undefined && slot.dir === INOUT) {
      throw new TypeError(`${fn}: ${slot.name} must be an array of x's dtype, got undefined${missing(fn, signature)}`);
    }
    if (value === null && slot.nullable) continue;
    const record = measure(fn, slot.name, value, valueDtype, of, named, signature);
    if (slot.per === ONCE && record.length === 0) throw new RangeError(`${fn}: ${slot.name} must not be empty (dim = 0)`);
    records[i] = record;
  }
  const length = records[op.x].length;
  call.length = length;
  for (let k = 0; k < paramSlots.length; k++) {
    const i = paramSlots[k];
    if (i !== op.x && records[i] !== null && slots[i].per === ROW) requireLength(fn, slots[i].name, records[i], length, 'x.length');
  }
  const weight = op.weight < 0 ? null : records[op.weight];
  if (op.elementwise) {
    call.dim = 1;
    call.stride = 1;
    call.rows = length;
    call.tokens = length;
  } else if (op.blockwise) {
    const format = BLOCK_FORMAT[outDtype];
    if (length % format.values !== 0) {
      throw new RangeError(`${fn}: x.length (${length}) must be a multiple of ${format.values}, the ${outDtype} block size: ` +
        `quantize whole rows whose length is a multiple of ${format.values}, and keep other tensors float32 (as ggml does)`);
    }
    call.dim = format.values;
    call.stride = format.values;
    call.rows = length / format.values;
    call.tokens = call.rows;
    call.outFormatCode = format.code;
    call.blockRowBytes = format.bytes;
  } else {
    call.eps = float32Option(fn, 'options.eps', opts.eps, defaults.eps, true);
    if (op.hasCastMode) {
      call.castMode = castModeOption(fn, opts.castMode, defaults.castMode);
      call.weightOffset = float32Option(fn, 'options.weightOffset', opts.weightOffset, defaults.weightOffset, false);
      requireWeightFor(fn, 'options.weightOffset', opts.weightOffset, 'weight', weight);
    }
    call.dim = resolveDim(fn, opts, shape, length, weight, op.bias < 0 ? undefined : records[op.bias]);
    if (op.hasHeads) {
      call.heads = headsOption(fn, opts, shape);
      call.headStride = headStrideOption(fn, opts, call.dim);
    }
    const extent = rowSpan(call.heads, call.dim, call.headStride); // a token's values, first head's start to last head's end
    const stride = resolveStride(fn, opts, shape, call.dim, extent);
    const dimFrom = opts.dim !== undefined || shape !== undefined ? '' : weight !== null ? 'weight' : 'bias';
    layRows(call, rowsOf(fn, length, call.dim, stride, dimFrom, extent), call.heads, call.headStride, stride);
    if (outDtype !== null) {
      call.outFormatCode = BLOCK_FORMAT[outDtype].code;
      call.blockRowBytes = blockRowBytes(fn, `options.${op.formatOption}`, outDtype, call.dim, call.dtype);
    }
  }
  call.dtypeCode = DTYPE[dtype].code;
  call.weightDtypeCode = DTYPE[call.weightDtype ?? 'float32'].code;
  call.castModeCode = CAST_MODE[call.castMode];
  // The arrays given as options, in slot order.
  for (let k = 0; k < optionSlots.length; k++) {
    const i = optionSlots[k];
    const slot = slots[i];
    const value = opts[slot.key];
    if (value === undefined) continue;
    const storage = slot.dtype === 'storage';
    const named = storage && op.hasDtype && opts.dtype !== undefined;
    const record = slot.per === BLOCKS
      ? measure(fn, slot.name, value, outDtype, op.formatOption, true, '', true)
      : measure(fn, slot.name, value, storage ? dtype : slot.dtype, storage ? 'dtype' : '', named, '', slot.dir === OUT);
    if (slot.per === STAT) requireLength(fn, slot.name, record, call.rows, 'the number of rows');
    else if (slot.per === BLOCKS) {
      const blocks = (call.rows * call.dim) / BLOCK_FORMAT[outDtype].values;
      requireLength(fn, slot.name, record, lengthIn(call, slot), `the bytes of ${blocks} ${outDtype} blocks of ${BLOCK_FORMAT[outDtype].bytes}`);
    } else requireLength(fn, slot.name, record, length, 'x.length');
    records[i] = record;
  }
  const { together } = op;
  if (together !== null && (records[together[0]] === null) !== (records[together[1]] === null)) {
    throw new TypeError(`${fn}: ${slots[together[0]].name} and ${slots[together[1]].name} must be given together`);
  }
  call.mayAlias = checkOverlaps(fn, op, records, call.stride, call.dim, null, call.heads, call.headStride);
  if (memory === undefined) {
    // (The WebGPU array form asks stillHolds again after the GPU computed: a view's tensor freed meanwhile is caught.)
    for (let i = 0; i < records.length; i++) if (records[i] !== null) records[i].within = tensorHolding(fn, slots[i].name, records[i]);
  } else {
    for (let i = 0; i < records.length; i++) if (records[i] !== null) memory.adopt(fn, slots[i].name, records[i]);
    // Views of one shared memory through several buffer objects: now known to be one memory.
    if (call.mayAlias) call.mayAlias = checkOverlaps(fn, op, records, call.stride, call.dim, null, call.heads, call.headStride);
  }
  // (After the overlap rule: a one-row call's x may run on past its dim values, up to a stride, which is not the call's.)
  oneRowStride(call);
  call.kernelStride = call.heads > 1 ? call.headStride : call.stride;
  const { results } = op;
  for (let k = 0; k < results.length; k++) {
    const i = results[k];
    if (records[i] === null && (slots[i].made < 0 || records[slots[i].made] !== null)) call.makes = true;
  }
  return call;
}


function requireLength(fn, name, record, length, what) {
  if (record.length !== length) throw new RangeError(`${fn}: ${name}.length (${record.length}) must equal ${what} (${length})`);
}

/** Values of a slot's array in a call: x's length for a per-row one, one a row, or dim. */
function lengthIn(call, slot) {
  return slot.per === ROW ? call.length : slot.per === STAT ? call.rows : slot.per === BLOCKS ? call.rows * call.blockRowBytes : call.dim;
}

/**
 * The call's results not given by the caller, made now: new arrays, in
 * records kept with the call, so that a remembered or prepared call makes
 * nothing else at each run. returnValue lets go of them.
 */
export function makeResults(call) {
  if (!call.makes) return;
  const { records } = call;
  const { slots, results } = call.op;
  for (let k = 0; k < results.length; k++) {
    const i = results[k];
    const slot = slots[i];
    if (slot.made >= 0 && records[slot.made] === null) continue;
    const dtype = slot.dtype === 'storage' ? call.dtype : slot.dtype === 'blocks' ? call.outDtype : 'float32';
    if (records[i] === null) records[i] = newOutput(dtype, lengthIn(call, slot));
    else if (records[i].owned) renewOutput(records[i]);
  }
}

/**
 * What a call of no rows returns, whatever its dim: its results made
 * (makeResults: empty, or dweight and dbias +0s of dim values, as
 * PyTorch's), nothing read, written or run; null for a call with rows.
 * Every form (src/api/run.js, src/reference/calls.js,
 * src/webgpu/arrays.js) asks here before it sizes anything, so none
 * allocates from a dim it will not use: a zero-row shape may name any dim.
 * (dweight and dbias are made only beside a weight and a bias of dim
 * values, which the caller allocated.)
 */
export function zeroRowResult(call) {
  if (call.rows !== 0) return null;
  makeResults(call);
  return returnValue(call);
}

/** What the call returns: its result, or { dx, dweight[, dbias] }. The
 * results it made are the caller's from here: its records let go of them. */
export function returnValue(call) {
  const { op, records } = call;
  let value;
  if (typeof op.returns === 'string') value = records[op.returnSlots].value;
  else {
    value = {};
    for (let i = 0; i < op.returns.length; i++) {
      const record = records[op.returnSlots[i]];
      defineProperty(value, op.returns[i], { __proto__: null, value: record === null ? null : record.value, enumerable: true, writable: true, configurable: true });
    }
  }
  if (call.makes) {
    for (let k = 0; k < op.results.length; k++) {
      const record = records[op.results[k]];
      if (record !== null && record.owned) record.value = null;
    }
  }
  return value;
}
