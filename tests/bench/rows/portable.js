// The rows that run wherever the package runs: Node and a browser page
// (tests/bench/page.js). The peers' rows (onnxruntime-web, TF.js) and the
// native row need Node.
import { naiveJs, naiveJsAllocating, reference } from './js.js';
import {
  newArray, newArrayWritten, newArrayThenCopying, scalarCopying, scalarZeroCopy, simdAllocating, simdCopying, simdExport, simdPrepared, simdStrided, simdZeroCopy,
  userNewArrayOut,
} from './wasm.js';
import { llamacppFused, llamacppUnfused } from './llamacpp.js';
import { memoryCopy } from './memory-copy.js';
import { simdQkNormHeads, simdQkNormPerHead } from './qk-norm.js';
import { simdAddRmsNorm, simdAddThenRmsNorm, simdBfloat16, simdFloat16, simdLayerNorm } from './variants.js';

export const PORTABLE_ROWS = [
  naiveJs, naiveJsAllocating, reference,
  scalarZeroCopy, scalarCopying, simdZeroCopy, simdCopying, simdAllocating, newArray, newArrayWritten, newArrayThenCopying, userNewArrayOut, simdPrepared, simdStrided,
  simdQkNormHeads, simdQkNormPerHead, simdExport,
  llamacppFused, llamacppUnfused, memoryCopy,
  simdBfloat16, simdFloat16, simdAddRmsNorm, simdAddThenRmsNorm, simdLayerNorm,
];
