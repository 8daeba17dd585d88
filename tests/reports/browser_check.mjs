// Opens HTML reports in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core;
// no browser is ever downloaded) and prints one JSON document describing what happened:
//   node tests/reports/browser_check.mjs OUT_DIR REPORT.html [REPORT.html ...]
// For each report: console errors and warnings, uncaught page errors, every request that is not
// the file itself (a self-contained report makes none; they are blocked and listed), the tables
// and call-outs, whether the embedded data parses, and for each chart canvas a screenshot decoded
// here (tiny PNG decoder below) with its share of non-white pixels and distinct colours, plus
// whether hovering its first data point opens a tooltip. Chart screenshots are written to OUT_DIR
// (whole pages too when TUTTI_REPORT_FULL_SHOTS is set).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { pathToFileURL } from 'node:url';

const require = createRequire(new URL('../../reports/assets/package.json', import.meta.url));
const { chromium } = require('playwright-core');

// --- PNG decoding (8-bit RGB/RGBA, non-interlaced: what Chromium's screenshots are) ----------
function decodePng(buf) {
  const sig = [137, 80, 78, 71, 13, 10, 26, 10];
  sig.forEach((b, i) => { if (buf[i] !== b) throw new Error('not a PNG'); });
  let pos = 8, width = 0, height = 0, depth = 0, ctype = 0, interlace = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      depth = data[8]; ctype = data[9]; interlace = data[12];
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  if (depth !== 8 || (ctype !== 2 && ctype !== 6) || interlace !== 0)
    throw new Error(`unsupported PNG: depth ${depth}, colour type ${ctype}, interlace ${interlace}`);
  const bpp = ctype === 6 ? 4 : 3, stride = width * bpp;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const out = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)], src = y * (stride + 1) + 1, dst = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[dst + x - bpp] : 0, b = y > 0 ? out[dst - stride + x] : 0;
      const c = x >= bpp && y > 0 ? out[dst - stride + x - bpp] : 0;
      let v = raw[src + x];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else if (f !== 0) throw new Error('bad PNG filter ' + f);
      out[dst + x] = v & 255;
    }
  }
  return { width, height, bpp, pixels: out };
}

function inkStats(png) {
  const { width, height, bpp, pixels } = png;
  let ink = 0, coloured = 0;
  const colours = new Set();
  for (let i = 0; i < width * height; i++) {
    const r = pixels[i * bpp], g = pixels[i * bpp + 1], b = pixels[i * bpp + 2];
    if (r < 235 || g < 235 || b < 235) {
      ink++;
      if (Math.max(r, g, b) - Math.min(r, g, b) > 40) coloured++;  // data, not grey axes or grid
      colours.add(((r >> 4) << 8) | ((g >> 4) << 4) | (b >> 4));  // 4-bit per channel buckets
    }
  }
  const n = width * height || 1;
  return { nonwhite_fraction: ink / n, coloured_fraction: coloured / n, colours: colours.size };
}

// --- main ------------------------------------------------------------------------------------
const [outDir, ...files] = process.argv.slice(2);
if (!outDir || files.length === 0) {
  console.error('usage: node browser_check.mjs OUT_DIR REPORT.html [...]');
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.TUTTI_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  timeout: 180000,  // a loaded 2-core CI machine can take a while to start Chromium
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
const results = [];
try {
  for (const file of files) {
    const abs = path.resolve(file);
    const url = pathToFileURL(abs).href;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true });
    const r = { file, console_errors: [], console_warnings: [], page_errors: [], external_requests: [], charts: [] };
    await context.route('**/*', (route) => {
      const u = route.request().url();
      if (u === url) return route.continue();
      r.external_requests.push(u);
      return route.abort();
    });
    const page = await context.newPage();
    page.setDefaultTimeout(120000);
    page.on('console', (m) => {
      if (m.type() === 'error') r.console_errors.push(m.text());
      else if (m.type() === 'warning') r.console_warnings.push(m.text());
    });
    page.on('pageerror', (e) => r.page_errors.push(String(e && e.message ? e.message : e)));
    await page.goto(url, { waitUntil: 'load' });
    const canvases = await page.locator('canvas').count();
    if (canvases > 0) {
      await page.waitForFunction(() => document.documentElement.hasAttribute('data-charts-rendered'), null,
                                 { timeout: 120000 }).catch(() => {});
    }
    Object.assign(r, await page.evaluate(() => {
      let dataOk = false;
      try { dataOk = !!JSON.parse(document.getElementById('tutti-report-data').textContent).kind; } catch (e) {}
      return {
        title: document.title,
        charts_rendered: Number(document.documentElement.getAttribute('data-charts-rendered') || 0),
        canvases: document.querySelectorAll('canvas').length,
        tables: document.querySelectorAll('table.data').length,
        verdict: Array.from(document.querySelectorAll('#verdict .card')).map((c) => c.innerText.replace(/\s+/g, ' ').trim()),
        callouts: Array.from(document.querySelectorAll('.callout')).map((c) => c.innerText.replace(/\s+/g, ' ').trim()),
        data_ok: dataOk,
        html_bytes: document.documentElement.outerHTML.length,
        // Layout problems a reader sees: a table wider than its wrapper that does not scroll, a
        // wrapper that sticks out of the page, a cell squeezed to a few characters per line.
        table_problems: Array.from(document.querySelectorAll('table.data')).flatMap((t) => {
          const out = [], wrap = t.parentElement, page = document.body.getBoundingClientRect();
          const ox = getComputedStyle(wrap).overflowX;
          if (t.scrollWidth > wrap.clientWidth + 1 && ox !== 'auto' && ox !== 'scroll')
            out.push(t.id + ': table overflows its container');
          if (wrap.getBoundingClientRect().right > page.right + 1) out.push(t.id + ': container overflows the page');
          t.querySelectorAll('td').forEach((td) => {
            // Lines of the cell's own text (a tall neighbour makes the whole row tall, so the
            // cell's box height says nothing about its text).
            const text = td.innerText.trim(), lh = parseFloat(getComputedStyle(td).lineHeight) || 18;
            const range = document.createRange();
            range.selectNodeContents(td);
            const tops = new Set(Array.from(range.getClientRects()).map((q) => Math.round(q.top)));
            const r = td.getBoundingClientRect();
            if (text.length >= 6 && tops.size > 3 && r.width < 8 * lh)
              out.push(t.id + ': cell "' + text.slice(0, 24) + '" wraps to ' + tops.size + ' lines');
          });
          return out;
        }),
        // Series drawn exactly on top of one another with the same look (one hides the other).
        hidden_series: (window.tuttiCharts || []).flatMap((ch) => {
          const out = [], ds = ch.data.datasets;
          const look = (d) => JSON.stringify([d.borderColor, d.borderDash || [], d.pointStyle || 'circle', d.type || '']);
          for (let a = 0; a < ds.length; a++)
            for (let b = a + 1; b < ds.length; b++)
              if (JSON.stringify(ds[a].data) === JSON.stringify(ds[b].data) && look(ds[a]) === look(ds[b]) &&
                  ds[a].data.length > 0)
                out.push(ch.canvas.id + ': "' + ds[a].label + '" and "' + ds[b].label + '"');
          return out;
        }),
      };
    }));
    const base = path.basename(file, '.html');
    if (process.env.TUTTI_REPORT_FULL_SHOTS) await page.screenshot({ path: path.join(outDir, base + '.png'), fullPage: true });
    const ids = await page.$$eval('canvas', (cs) => cs.map((c) => c.id));
    for (let i = 0; i < ids.length; i++) {
      const loc = page.locator('canvas').nth(i);
      await loc.scrollIntoViewIfNeeded();
      const shot = await loc.screenshot();
      fs.writeFileSync(path.join(outDir, `${base}-${ids[i]}.png`), shot);
      const png = decodePng(shot);
      // Hover the first drawn data element: Chart.js must open its tooltip.
      const target = await page.evaluate((i) => {
        const ch = window.tuttiCharts && window.tuttiCharts[i];
        if (!ch) return null;
        for (let d = 0; d < ch.data.datasets.length; d++) {
          const meta = ch.getDatasetMeta(d);
          for (const el of meta.data) {
            if (el && isFinite(el.x) && isFinite(el.y) && !el.skip) {
              const box = ch.canvas.getBoundingClientRect();
              const y = el.base !== undefined && isFinite(el.base) ? (el.y + el.base) / 2 : el.y;
              const x = el.base !== undefined && isFinite(el.base) && ch.options.indexAxis === 'y' ? (el.x + el.base) / 2 : el.x;
              return { x: box.left + x, y: box.top + y };
            }
          }
        }
        return null;
      }, i);
      let tooltip = false;
      if (target) {
        await page.mouse.move(target.x, target.y);
        await page.waitForFunction((i) => window.tuttiCharts[i].tooltip.getActiveElements().length > 0, i,
                                   { timeout: 5000 }).catch(() => {});
        tooltip = await page.evaluate((i) => {
          const t = window.tuttiCharts[i].tooltip;
          return !!t && t.getActiveElements().length > 0 && t.opacity > 0;
        }, i);
        await page.mouse.move(0, 0);
      }
      r.charts.push({ id: ids[i], width: png.width, height: png.height, ...inkStats(png), tooltip });
    }
    results.push(r);
    await context.close();
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify({ browser: 'chromium', results }, null, 1) + '\n');
