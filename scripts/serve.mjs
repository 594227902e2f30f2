// A static file server for the page and the tests: correct MIME types for .mjs and .wasm, the
// cross-origin isolation headers (COOP/COEP) under which the page runs the threaded engine
// (SharedArrayBuffer), and the page's Content-Security-Policy as a header. Loopback only.
//
//   node scripts/serve.mjs [ROOT] [PORT]     default: the repository root, port 8000
import { createReadStream, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ts': 'text/plain; charset=utf-8',
  '.safetensors': 'application/octet-stream',
};

// The page's Content-Security-Policy (its <meta> tag in web/index.html), sent as a header with
// every file as a deployment would: a <meta> tag does not reach a worker, whose policy is the
// header of its own script.
const PAGE_POLICY = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]+)"\s*\/?>/.exec(
  readFileSync(new URL('../web/index.html', import.meta.url), 'utf8'),
)?.[1];

// Files are read and sent 1 MB at a time: with Node's default of 64 KB, this server, not the
// browser, set the pace of a model's download (a static host sends a file with sendfile).
const CHUNK = 1 << 20;

// Resolves with {server, url} once listening on 127.0.0.1 (port 0: any free port). isolate: false
// leaves out COOP/COEP, as a plain static host would (the engine then runs on one thread). cors:
// let pages of any origin use the files (a CDN). policy: the Content-Security-Policy header
// (default: the page's; null: none).
export function startServer(root, port = 0, { isolate = true, cors = false, policy = PAGE_POLICY } = {}) {
  if (!PAGE_POLICY) throw new Error('web/index.html has no Content-Security-Policy <meta> tag to serve as a header');
  const base = resolve(root);
  const server = createServer(async (req, res) => {
    const path = normalize(join(base, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    if (path !== base && !path.startsWith(base + sep)) {
      res.writeHead(403).end();
      return;
    }
    const isDirectory = (await stat(path).catch(() => null))?.isDirectory();
    const { pathname } = new URL(req.url, 'http://x');
    if (isDirectory && !pathname.endsWith('/')) {
      // /web -> /web/, so that the page's relative URLs work
      res.writeHead(301, { location: `${pathname}/` }).end();
      return;
    }
    const file = isDirectory ? join(path, 'index.html') : path;
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const headers = {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'accept-ranges': 'bytes',
      ...(isolate
        ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' }
        : {}),
      'cache-control': 'no-cache',
      ...(policy ? { 'content-security-policy': policy } : {}),
      ...(cors ? { 'access-control-allow-origin': '*', 'cross-origin-resource-policy': 'cross-origin' } : {}),
    };
    // One range ("bytes=FROM-TO" or "bytes=FROM-"), as static hosts serve them: the page reads a
    // model's header this way to tell its size before downloading it.
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (range && Number(range[1]) < info.size) {
      const from = Number(range[1]),
        to = Math.min(range[2] ? Number(range[2]) : info.size - 1, info.size - 1);
      res.writeHead(206, {
        ...headers,
        'content-range': `bytes ${from}-${to}/${info.size}`,
        'content-length': to - from + 1,
      });
      createReadStream(file, { start: from, end: to, highWaterMark: CHUNK }).pipe(res);
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': info.size });
    createReadStream(file, { highWaterMark: CHUNK }).pipe(res);
  });
  return new Promise((ok) =>
    server.listen(port, '127.0.0.1', () => ok({ server, url: `http://127.0.0.1:${server.address().port}/` })),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
  const { url } = await startServer(root, Number(process.argv[3] ?? 8000));
  console.log(`serving ${resolve(root)} at ${url}`);
  if (await stat(join(resolve(root), 'web/index.html')).catch(() => null)) console.log(`the page: ${url}web/`);
}
