// The demo's static file server: serves the repository (the page in web/
// imports the package straight from src/) on localhost only.
// Usage: node web/serve.js [port]   (port 0 picks a free one; make demo PORT=9000)
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

// Cross-origin isolation (SharedArrayBuffer, precise timers) for pages whose
// path starts with `options.isolatedPrefix`: the prefix is dropped and the
// COOP/COEP headers added.
const ISOLATION_HEADERS = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };

/** `html` with `extra` first inside <head> (after the doctype when there is no <head> tag). */
function withHeadHtml(html, extra) {
  const head = /<head[^>]*>/i.exec(html) ?? /<!doctype[^>]*>/i.exec(html);
  const at = head ? head.index + head[0].length : 0;
  return `${html.slice(0, at)}\n${extra}${html.slice(at)}`;
}

/**
 * Serves `root` (the repository by default) on localhost; resolves to the
 * listening server. Options for the browser tests: `isolatedPrefix` (see
 * above), `headHtml` (inserted at the start of every HTML file, before the
 * page's own scripts), `onError(status, path)` (called for every 4xx reply).
 */
export function startServer(port = 8080, host = '127.0.0.1', root = repoRoot, options = {}) {
  const { isolatedPrefix, headHtml, onError } = options;
  const server = createServer(async (req, res) => {
    let path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    const isolated = isolatedPrefix !== undefined && path.startsWith(`${isolatedPrefix}/`);
    if (isolated) path = path.slice(isolatedPrefix.length);
    const extraHeaders = isolated ? ISOLATION_HEADERS : {};
    if (path === '/') {
      res.writeHead(302, { location: '/web/' });
      res.end();
      return;
    }
    const file = normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
    if (!file.startsWith(root)) {
      onError?.(403, path);
      res.writeHead(403);
      res.end('forbidden');
      return;
    }
    try {
      let body = await readFile(file);
      if (headHtml !== undefined && extname(file) === '.html') body = withHeadHtml(String(body), headHtml);
      res.writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store', ...extraHeaders,
      });
      res.end(body);
    } catch {
      onError?.(404, path);
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] ?? 8080);
  try {
    const server = await startServer(port);
    console.log(`rmsnorm-wasm demo: http://localhost:${server.address().port}/web/`);
  } catch (error) {
    // What to do, not a stack trace: the usual case is a second `make demo`.
    const why = {
      EADDRINUSE: `port ${port} is already in use (another server, or a demo still running)`,
      EACCES: `port ${port} needs privileges this user does not have`,
    }[error.code];
    if (!why) throw error;
    console.error(`rmsnorm-wasm demo: ${why}. Pick another port: make demo PORT=9000 (or node web/serve.js 9000; 0 picks a free one).`);
    process.exitCode = 1;
  }
}
