// A Node CommonJS consumer of the installed package. The documented route is
// `await import()`, which works on every Node >= 18; `require()` also works
// where Node can require ES modules (20.19+, 22.12+), and then returns the
// very same module, so there is no second copy with its own init() state.
(async () => {
  const { init, rmsNorm } = await import('rmsnorm-wasm');
  const { rmsNorm: referenceRmsNorm } = await import('rmsnorm-wasm/reference');
  const webgpu = await import('rmsnorm-wasm/webgpu');
  const { x, weight } = await import('./example.mjs');
  const { backend } = await init();
  let required;
  try {
    required = { sameModule: require('rmsnorm-wasm').rmsNorm === rmsNorm };
  } catch (err) {
    required = { error: err.code };
  }
  console.log(JSON.stringify({
    backend,
    wasm: Array.from(rmsNorm(x, weight)),
    reference: Array.from(referenceRmsNorm(x, weight)),
    webgpu: Object.keys(webgpu).sort(),
    required,
    canRequireEsm: Boolean(process.features.require_module),
    version: require('rmsnorm-wasm/package.json').version,
    header: require.resolve('rmsnorm-wasm/c/rmsnorm_wasm.h'),
  }));
})();
