// Every row of the benchmark, in table order: the rows that run anywhere
// (./portable.js), with the peers that need Node beside the rows they
// are read against.
import { llamacppFused } from './llamacpp.js';
import { memoryCopy } from './memory-copy.js';
import { PORTABLE_ROWS } from './portable.js';
import { ortRmsNormalization, ortSimplifiedLayerNorm } from './onnxruntime.js';
import { tfjs } from './tfjs.js';
import { native } from './native.js';

const BEFORE = new Map([[llamacppFused, [ortRmsNormalization, ortSimplifiedLayerNorm, tfjs]], [memoryCopy, [native]]]);

export const ROWS = PORTABLE_ROWS.flatMap((row) => [...(BEFORE.get(row) ?? []), row]);
