// onnxruntime-web, wasm backend, one thread: one-node models, timed as
// `await session.run(feeds)` with the input tensors built once. ORT copies the
// feeds into its wasm memory and the output out of it on every run.
// (1.30 ignores a preallocated CPU output passed as fetches: we use the
// returned tensor.)
import * as ort from 'onnxruntime-web';
import { normModel } from '../onnx-model.js';

ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';

function ortRow(id, opType, opset, label) {
  return {
    id,
    name: `onnxruntime-web ${ort.env.versions.web}, ${label}`,
    async setup({ x, w, rows, dim, eps }) {
      const session = await ort.InferenceSession.create(normModel(opType, { dim, eps, opset }), {
        executionProviders: ['wasm'],
        graphOptimizationLevel: 'all',
      });
      const feeds = {
        X: new ort.Tensor('float32', x, [rows, dim]),
        scale: new ort.Tensor('float32', w, [dim]),
      };
      let y = null;
      const call = async () => {
        y = (await session.run(feeds)).Y;
      };
      return {
        call,
        async: true,
        output: () => y.data,
        dispose: () => session.release(),
      };
    },
  };
}

export const ortRmsNormalization = ortRow('ort-rmsnormalization', 'RMSNormalization', 23,
  'RMSNormalization (opset 23)');
export const ortSimplifiedLayerNorm = ortRow('ort-simplifiedlayernorm', 'SimplifiedLayerNormalization', 23,
  'SimplifiedLayerNormalization');
