// Every row of the benchmark, in table order.
import { naiveJs, reference } from './js.js';
import { scalarCopying, scalarZeroCopy, simdCopying, simdExport, simdZeroCopy } from './wasm.js';
import { ortRmsNormalization, ortSimplifiedLayerNorm } from './onnxruntime.js';
import { tfjs } from './tfjs.js';
import { memoryCopy } from './memory-copy.js';
import { simdAddRmsNorm, simdAddThenRmsNorm, simdBfloat16, simdLayerNorm } from './variants.js';
import { native } from './native.js';

export const ROWS = [
  naiveJs, reference,
  scalarZeroCopy, scalarCopying, simdZeroCopy, simdCopying, simdExport,
  ortRmsNormalization, ortSimplifiedLayerNorm, tfjs,
  native, memoryCopy,
  simdBfloat16, simdAddRmsNorm, simdAddThenRmsNorm, simdLayerNorm,
];
