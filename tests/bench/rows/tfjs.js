// TensorFlow.js on its wasm backend (SIMD build, one thread): RMSNorm as the
// composed ops x·rsqrt(mean(x²)+eps)·w, read back with dataSync(). x and w
// are tensors made once; each call computes, reads and frees its result.
import { createRequire } from 'node:module';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { setThreadsCount, setWasmPaths } from '@tensorflow/tfjs-backend-wasm';

const require = createRequire(import.meta.url);

let ready = null;
/** The wasm backend, its .wasm files read from node_modules (no network). */
function wasmBackend() {
  ready ??= (async () => {
    const wasmFile = require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm');
    setWasmPaths(`${path.dirname(wasmFile)}${path.sep}`);
    setThreadsCount(1);
    if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend failed to load');
    tf.env().set('DEBUG', false);
  })();
  return ready;
}

export const tfjs = {
  id: 'tfjs-wasm',
  name: `TensorFlow.js ${tf.version_core} wasm, composed ops`,
  async setup({ x, w, rows, dim, eps }) {
    await wasmBackend();
    const xt = tf.tensor2d(x, [rows, dim]);
    const wt = tf.tensor1d(w);
    let y = null;
    const call = () => {
      const yt = tf.tidy(() =>
        tf.mul(tf.mul(xt, tf.rsqrt(tf.add(tf.mean(tf.square(xt), -1, true), eps))), wt));
      y = yt.dataSync();
      yt.dispose();
    };
    return {
      call,
      output: () => y,
      dispose: () => tf.dispose([xt, wt]),
    };
  },
};
