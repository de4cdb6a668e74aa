// Every row of the benchmark, in table order.
import {
  llamacppFused, llamacppUnfused, memoryCopy, naiveJs, naiveJsAllocating, newArray, newArrayWritten, newArrayThenCopying, reference, scalarCopying, scalarZeroCopy,
  simdAddRmsNorm, simdAddThenRmsNorm, simdAllocating, simdBfloat16, simdCopying, simdExport, simdLayerNorm, simdPrepared,
  simdStrided, simdZeroCopy,
} from './portable.js';
import { ortRmsNormalization, ortSimplifiedLayerNorm } from './onnxruntime.js';
import { tfjs } from './tfjs.js';
import { native } from './native.js';

export const ROWS = [
  naiveJs, naiveJsAllocating, reference,
  scalarZeroCopy, scalarCopying, simdZeroCopy, simdCopying, simdAllocating, newArray, newArrayWritten, newArrayThenCopying, simdPrepared, simdStrided, simdExport,
  ortRmsNormalization, ortSimplifiedLayerNorm, tfjs, llamacppFused, llamacppUnfused,
  native, memoryCopy,
  simdBfloat16, simdAddRmsNorm, simdAddThenRmsNorm, simdLayerNorm,
];
