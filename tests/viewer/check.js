// check.js: load a tpsim trace in a real trace viewer (speedscope, from npm) in headless
// Chromium (Debian's), and fail on any console warning or error the viewer prints while
// importing it (speedscope warns "Tried to end X when Y was on the top of the stack" for
// every slice that overlaps the next one as it computes ts + dur), on a profile that does not
// load, or on a nesting depth deeper than the trace's real one (a step annotation holding
// host slices: 2), computed from the file as the viewer nests complete events.
// usage: node check.js SPEEDSCOPE_RELEASE_DIR TRACE.json MAX_DEPTH
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const puppeteer = require('puppeteer-core');

const [releaseArg, tracePath, maxDepthArg] = process.argv.slice(2);
const releaseDir = path.resolve(releaseArg);
const maxDepth = Number(maxDepthArg || 2);
const types = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
               '.wasm': 'application/wasm', '.png': 'image/png', '.woff2': 'font/woff2'};

function depthOf(trace) {
  const ev = (Array.isArray(trace) ? trace : trace.traceEvents).filter(e => e.ph === 'X');
  const threads = new Map();
  for (const e of ev) {
    const k = e.pid + '/' + e.tid;
    if (!threads.has(k)) threads.set(k, []);
    threads.get(k).push([e.ts, e.ts + e.dur]); // IEEE double, as the viewer adds them
  }
  let depth = 0, partial = 0;
  for (const sl of threads.values()) {
    sl.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const stack = [];
    for (const [ts, end] of sl) {
      while (stack.length && ts >= stack[stack.length - 1]) stack.pop();
      if (stack.length && end > stack[stack.length - 1]) partial++;
      stack.push(end);
      depth = Math.max(depth, stack.length);
    }
  }
  return {events: ev.length, threads: threads.size, depth, partial};
}

(async () => {
  const body = fs.readFileSync(tracePath);
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.split(/[?#]/)[0]);
    if (url === '/trace.json') {
      res.writeHead(200, {'Content-Type': 'application/json'});
      return res.end(body);
    }
    const file = path.join(releaseDir, url === '/' ? 'index.html' : path.normalize(url));
    if (!file.startsWith(releaseDir) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, {'Content-Type': types[path.extname(file)] || 'application/octet-stream'});
    res.end(fs.readFileSync(file));
  });
  await new Promise(r => server.listen(0, '127.0.0.1', r));
  const port = server.address().port, origin = `http://127.0.0.1:${port}/`;
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--enable-unsafe-swiftshader']});
  const messages = [];
  let gl = 0;
  let failed = 0;
  try {
    const page = await browser.newPage();
    // the viewer's own messages (its script is served from here), not the browser's about
    // its software GL
    page.on('console', m => {
      const from = (m.location() && m.location().url) || '';
      if (!['warn', 'warning', 'error', 'assert'].includes(m.type()) || !from.startsWith(origin)) return;
      // Chromium's software-GL driver notes ("[.WebGL-0x...]GL Driver Message ...: GPU stall
      // due to ReadPixels") are about this headless machine, not the trace
      if (/^\[\.WebGL-[0-9a-fx]+\]GL Driver Message/.test(m.text())) gl++;
      else messages.push(m.type() + ': ' + m.text());
    });
    page.on('pageerror', e => messages.push('pageerror: ' + e.message));
    await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=http://127.0.0.1:${port}/trace.json`,
                    {waitUntil: 'load', timeout: 60000});
    // speedscope titles the page after the profile it shows once the import is done
    await page.waitForFunction(() => /trace\.json/.test(document.title), {timeout: 120000});
    const title = await page.title();
    const d = depthOf(JSON.parse(body.toString()));
    console.log(`viewer: speedscope ${require(path.join(releaseDir, '..', '..', 'package.json')).version} in ` +
                `${await browser.version()}: loaded ${path.basename(tracePath)} ("${title}"), ` +
                `${d.events} slices on ${d.threads} threads`);
    console.log(`viewer: console warnings/errors: ${messages.length}; nesting depth ${d.depth} (real: ` +
                `${maxDepth}); slices sticking out of their parent in IEEE double: ${d.partial} ` +
                `(${gl} software-GL notes of the browser ignored)`);
    for (const m of messages.slice(0, 5)) console.log('  ' + m.slice(0, 200));
    if (messages.length || d.depth > maxDepth || d.partial) failed = 1;
  } catch (e) {
    console.log('viewer: FAILED: ' + e.message);
    for (const m of messages.slice(0, 5)) console.log('  ' + m.slice(0, 200));
    failed = 1;
  }
  await browser.close();
  server.close();
  process.exit(failed);
})();
