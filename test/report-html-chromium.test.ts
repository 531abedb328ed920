import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngSize } from '../src/report/png.js';
import { fixtureRun } from './fixtures/report/run.js';
import { charts } from '../src/report/charts.js';
import { reportHtml } from '../src/report/html.js';
import { renderCharts } from '../src/report/outputs.js';

/**
 * Loads report.html in headless Chromium over the DevTools protocol (on a
 * pipe: no port, no extra package) and checks what a reader gets: every
 * chart's SVG laid out with a non-zero size, and no request but the page
 * itself. Takes a full-page screenshot (kept at $CTXSIM_SCREENSHOT if set).
 */

const chromium = ['chromium', 'chromium-browser'].find((c) => spawnSync('sh', ['-c', `command -v ${c}`]).status === 0);
const reason = 'chromium is not on PATH (Debian: apt-get install chromium); skipping the headless check of report.html';
if (!chromium) console.warn(reason);

/** A minimal DevTools-protocol client over --remote-debugging-pipe (fd 3 in, fd 4 out, NUL-separated JSON). */
class Cdp {
  private next = 1;
  private buffer = '';
  private pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- DevTools events are untyped JSON
  readonly events: { method: string; params: any; sessionId?: string }[] = [];
  private waiters: { method: string; resolve: (p: unknown) => void }[] = [];

  constructor(private readonly input: Writable, output: Readable) {
    output.setEncoding('utf8');
    output.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\0')) >= 0) {
        const msg = JSON.parse(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + 1);
        if (msg.id !== undefined) {
          const p = this.pending.get(msg.id);
          this.pending.delete(msg.id);
          if (msg.error) p?.reject(new Error(`${msg.error.message}`));
          else p?.resolve(msg.result);
        } else {
          this.events.push(msg);
          this.waiters = this.waiters.filter((w) => (w.method === msg.method ? (w.resolve(msg.params), false) : true));
        }
      }
    });
  }

  send(method: string, params: object = {}, sessionId?: string): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- DevTools replies are untyped JSON
    const id = this.next++;
    this.input.write(`${JSON.stringify({ id, method, params, ...(sessionId && { sessionId }) })}\0`);
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  once(method: string): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- DevTools events are untyped JSON
    return new Promise((resolve) => this.waiters.push({ method, resolve }));
  }
}

describe.skipIf(!chromium)('report.html in headless Chromium', () => {
  let dir: string;
  let browser: ChildProcess;
  let cdp: Cdp;
  let chartNames: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctxsim-html-'));
    const { results, info } = await fixtureRun();
    const list = charts(results, info);
    chartNames = list.map((c) => c.name);
    writeFileSync(join(dir, 'report.html'), reportHtml(results, info, await renderCharts(list)));
    browser = spawn(
      chromium!,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--hide-scrollbars',
        `--user-data-dir=${join(dir, 'profile')}`,
        '--remote-debugging-pipe',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
    );
    cdp = new Cdp(browser.stdio[3] as Writable, browser.stdio[4] as Readable);
  });

  afterAll(async () => {
    if (browser && browser.exitCode === null) {
      // Let Chromium finish writing its profile before the folder goes.
      const exited = new Promise((resolve) => browser.once('exit', resolve));
      void cdp.send('Browser.close').catch(() => undefined);
      const timer = setTimeout(() => browser.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });

  it('shows every chart with a size, loads nothing, and screenshots', async () => {
    const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
    await cdp.send('Network.enable', {}, sessionId);
    await cdp.send('Page.enable', {}, sessionId);
    await cdp.send('Log.enable', {}, sessionId);
    await cdp.send('Emulation.setDeviceMetricsOverride', { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
    const page = pathToFileURL(join(dir, 'report.html')).href;
    const loaded = cdp.once('Page.loadEventFired');
    await cdp.send('Page.navigate', { url: page }, sessionId);
    await loaded;

    const { result } = await cdp.send(
      'Runtime.evaluate',
      {
        returnByValue: true,
        expression: `JSON.stringify({
          charts: [...document.querySelectorAll('figure')].map((f) => {
            const svg = f.querySelector(':scope > svg');
            const r = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
            return { id: f.id, width: r.width, height: r.height, marks: svg ? svg.querySelectorAll('path, line, rect, text').length : 0 };
          }),
          csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content,
          sections: [...document.querySelectorAll('section > h2')].map((h) => h.textContent),
          budgetRows: document.querySelectorAll('table.budget tbody tr').length,
          lostRows: document.querySelectorAll('table.lost tbody tr').length,
        })`,
      },
      sessionId,
    );
    const dom = JSON.parse(result.value);
    // The retention-vs-cost chart comes first, under the verdict; the others in their order.
    const first = 'retention-vs-cost';
    expect(dom.charts.map((c: { id: string }) => c.id)).toEqual([first, ...chartNames.filter((n) => n !== first)].map((n) => `chart-${n}`));
    for (const c of dom.charts) {
      expect(c.width, c.id).toBeGreaterThan(100);
      expect(c.height, c.id).toBeGreaterThan(100);
      expect(c.marks, c.id).toBeGreaterThan(10);
    }
    expect(dom.csp).toBe("default-src 'none'; style-src 'unsafe-inline'; img-src data:");
    expect(dom.sections).toEqual(['Verdict', 'Budget per policy', 'Latency, storage and safety per policy', 'Charts', 'Per scenario', 'Facts not retained', 'Study']);
    expect(dom.budgetRows).toBe(5);
    expect(dom.lostRows).toBeGreaterThan(0);

    // The only request is the page itself; nothing was blocked (nothing tried to load).
    const requests = cdp.events.filter((e) => e.method === 'Network.requestWillBeSent').map((e) => e.params.request.url);
    expect(requests).toEqual([page]);
    expect(cdp.events.filter((e) => e.method === 'Network.loadingFailed')).toEqual([]);
    const violations = cdp.events.filter((e) => e.method === 'Log.entryAdded' && /Content Security Policy/i.test(e.params.entry.text));
    expect(violations).toEqual([]);

    const metrics = await cdp.send('Page.getLayoutMetrics', {}, sessionId);
    const { data } = await cdp.send(
      'Page.captureScreenshot',
      { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width: 1280, height: Math.ceil(metrics.cssContentSize.height), scale: 1 } },
      sessionId,
    );
    const png = Buffer.from(data, 'base64');
    expect(pngSize(png)?.width).toBe(1280);
    const shot = join(dir, 'report.png');
    writeFileSync(shot, png);
    if (process.env.CTXSIM_SCREENSHOT) copyFileSync(shot, process.env.CTXSIM_SCREENSHOT);
  });
});

if (!chromium) {
  describe('report.html in headless Chromium', () => {
    it.skip(reason, () => undefined);
  });
}
