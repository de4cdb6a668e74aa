// A call resolved from its function's description (./descriptions.js):
// options read (./options.js), arrays measured (./arrays.js), sizes and
// values checked, then the overlap rule (./overlap.js), always in that
// order and before anything is written. The wasm API and the reference
// both resolve here, so both throw the same error for the same mistake.

import { defineProperty, freeze, isView, kindOf, RangeError, setPrototypeOf, TypeError } from '../loader/intrinsics.js';
import { measure, newOutput, weightDtypeOf } from './arrays.js';
import { castModeOption, dtypeOption, float32Option, optionReader, readShape, resolveDim } from './options.js';
import { checkOverlaps } from './overlap.js';

export const ROW = 0;
export const STAT = 1;
export const ONCE = 2;
export const NONE = 0;
export const IN = 1;
export const OUT = 2;
export const INOUT = 3;

/** A class whose instances have exactly `keys` as own fields (initially
 * `value`) and inherit nothing: records that answer only for themselves. */
function fieldsClass(keys, value) {
  class Fields {
    constructor() {
      for (let i = 0; i < keys.length; i++) this[keys[i]] = value;
    }
  }
  setPrototypeOf(Fields.prototype, null);
  return Fields;
}

/** A description made ready for calls: its slots numbered and resolved. */
export function define(name, spec) {
  const keys = [];
  for (const key in spec.arrays) keys[keys.length] = key;
  const slots = [];
  for (let i = 0; i < keys.length; i++) {
    const s = spec.arrays[keys[i]];
    slots[i] = freeze({
      key: keys[i],
      name: s.param !== undefined || s.made !== undefined ? keys[i] : `options.${keys[i]}`,
      param: s.param ?? -1, per: s.per, dir: s.dir, writes: (s.dir & OUT) !== 0, reads: (s.dir & IN) !== 0,
      dtype: s.dtype ?? (s.per === STAT ? 'float32' : 'storage'), nullable: s.nullable === true,
      over: s.over === undefined ? -1 : keys.indexOf(s.over), result: s.result === true,
      made: s.made === undefined ? -1 : keys.indexOf(s.made), scratch: s.scratch === true,
    });
  }
  const together = spec.together === undefined ? null : [keys.indexOf(spec.together[0]), keys.indexOf(spec.together[1])];
  return freeze({
    name, params: spec.params, options: spec.options, slots, keys, together, returns: spec.returns,
    exports: spec.exports, kernel: spec.kernel, readOptions: optionReader(spec.options),
    Pointers: fieldsClass(keys, 0), Given: fieldsClass(keys, null),
    hasDtype: 'dtype' in spec.options, hasBias: keys.indexOf('bias') >= 0, x: keys.indexOf('x'),
    returnSlots: typeof spec.returns === 'string' ? keys.indexOf(spec.returns) : spec.returns.map((key) => keys.indexOf(key)),
  });
}

/** One checked call: the kernel's terms, and a record per slot (null where none). */
class Call {
  fn; op; rows; dim; eps; dtype; weightDtype; castMode; weightOffset; mayAlias; records; given;
  constructor(fn, op) {
    this.fn = fn;
    this.op = op;
    this.rows = 0;
    this.dim = 0;
    this.eps = 0;
    this.dtype = 'float32';
    this.weightDtype = null;
    this.castMode = 'llama';
    this.weightOffset = 0;
    this.mayAlias = false;
    this.records = [];
    for (let i = 0; i < op.slots.length; i++) this.records[i] = null;
    this.given = new op.Given(); // the caller's records by slot name, null where not given
  }
}

/**
 * Resolves `op` called as fn(a, b, c, d, e) (its parameters, then its
 * options). `memory`, the instance memory the call will run in (undefined
 * for the reference), adopts each record once all are checked: it refuses
 * what it cannot take and claims what lies in it (src/loader/memory.js).
 */
export function resolve(op, fn, values, memory) {
  const { slots, options: defaults } = op;
  const opts = op.readOptions(fn, values[op.params.length]);
  const shape = readShape(fn, opts.shape);
  const call = new Call(fn, op);
  const x = values[slots[op.x].param];
  const inferred = isView(x) && kindOf(x) === 'Float16Array' ? 'float16' : 'float32';
  call.dtype = op.hasDtype ? dtypeOption(fn, opts.dtype, inferred) : 'float32';
  const { records } = call;
  let weight = null;
  let bias;
  // The parameters, in slot order.
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i];
    if (slot.param < 0) continue;
    const value = values[slot.param];
    let dtype = slot.dtype === 'storage' ? call.dtype : slot.dtype;
    if (slot.dtype === 'weight') {
      call.weightDtype = weightDtypeOf(fn, value, opts.weightDtype, call.dtype);
      dtype = call.weightDtype;
    } else if (value === null && slot.nullable) {
      // no weight or bias
    } else if (value === undefined && slot.nullable) {
      throw new TypeError(`${fn}: ${slot.name} must be a Float32Array or null (for no ${slot.name}), got undefined`);
    } else if (value === undefined && slot.dir === INOUT) {
      throw new TypeError(`${fn}: ${slot.name} must be an array of x's dtype, got undefined`);
    }
    if (value === null && slot.nullable) {
      if (slot.key === 'bias') bias = null;
      continue;
    }
    const record = measure(fn, slot.name, value, dtype, slot.dtype === 'weight' ? 'weightDtype' : 'dtype');
    if (slot.per === ONCE && record.length === 0) throw new RangeError(`${fn}: ${slot.name} must not be empty (dim = 0)`);
    if (slot.key === 'weight') weight = record;
    if (slot.key === 'bias') bias = record;
    records[i] = record;
  }
  const length = records[op.x].length;
  for (let i = 0; i < slots.length; i++) {
    if (records[i] !== null && slots[i].per === ROW && i !== op.x) requireLength(fn, slots[i].name, records[i], length, 'x.length');
  }
  call.eps = float32Option(fn, 'options.eps', opts.eps, defaults.eps, true);
  if (op.hasDtype) {
    call.castMode = castModeOption(fn, opts.castMode, defaults.castMode);
    call.weightOffset = float32Option(fn, 'options.weightOffset', opts.weightOffset, defaults.weightOffset, false);
    if (opts.weightOffset !== undefined && weight === null) {
      throw new TypeError(`${fn}: options.weightOffset needs a weight, but weight is null`);
    }
  }
  call.dim = resolveDim(fn, opts, shape, length, weight, op.hasBias ? bias ?? null : undefined);
  call.rows = length / call.dim;
  // The arrays given as options, in slot order.
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i];
    if (slot.param >= 0 || slot.made >= 0) continue;
    const value = opts[slot.key];
    if (value === undefined) continue;
    const record = measure(fn, slot.name, value, slot.dtype === 'storage' ? call.dtype : slot.dtype);
    requireLength(fn, slot.name, record, slot.per === STAT ? call.rows : length, slot.per === STAT ? 'the number of rows' : 'x.length');
    records[i] = record;
  }
  const { together } = op;
  if (together !== null && (records[together[0]] === null) !== (records[together[1]] === null)) {
    throw new TypeError(`${fn}: ${slots[together[0]].name} and ${slots[together[1]].name} must be given together`);
  }
  call.mayAlias = checkOverlaps(fn, slots, records);
  if (memory !== undefined) {
    for (let i = 0; i < slots.length; i++) if (records[i] !== null) memory.adopt(fn, slots[i].name, records[i]);
    // Views of one shared memory through several buffer objects: now known to be one memory.
    if (call.mayAlias) call.mayAlias = checkOverlaps(fn, slots, records);
  }
  for (let i = 0; i < slots.length; i++) call.given[slots[i].key] = records[i];
  return call;
}

function requireLength(fn, name, record, length, what) {
  if (record.length !== length) throw new RangeError(`${fn}: ${name}.length (${record.length}) must equal ${what} (${length})`);
}

/** Values of a slot's array in a call: dim a row, one a row, or dim. */
export function lengthIn(call, slot) {
  return slot.per === ROW ? call.rows * call.dim : slot.per === STAT ? call.rows : call.dim;
}

/** The call's results not given by the caller, made now (new arrays). */
export function makeResults(call) {
  const { records } = call;
  const { slots } = call.op;
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i];
    if (!slot.result || records[i] !== null || (slot.made >= 0 && records[slot.made] === null)) continue;
    records[i] = newOutput(slot.dtype === 'storage' ? call.dtype : 'float32', lengthIn(call, slot));
  }
}

/** What the call returns: its result, or { dx, dweight[, dbias] }. */
export function returnValue(call) {
  const { op, records } = call;
  if (typeof op.returns === 'string') return records[op.returnSlots].value;
  const grads = {};
  for (let i = 0; i < op.returns.length; i++) {
    const record = records[op.returnSlots[i]];
    defineProperty(grads, op.returns[i], { value: record === null ? null : record.value, enumerable: true, writable: true, configurable: true });
  }
  return grads;
}

