import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * What report.html's live charts run on: the browser builds of Vega and
 * vega-embed (which brings vega-tooltip, and Vega's expression interpreter,
 * so nothing is evaluated as code), read from the installed packages and
 * inlined in the page, so it needs no network; and the page's own script that
 * puts each chart's compiled spec in its figure. Each script is allowed by
 * its hash in the page's Content-Security-Policy, and by nothing else.
 */

/** A script of the page: its text, and its `'sha256-…'` source for the Content-Security-Policy. */
export interface PageScript {
  text: string;
  hash: string;
}

const require = createRequire(import.meta.url);

function pageScript(text: string, what: string): PageScript {
  // Inline, a script must not close its element nor open a comment.
  if (/<\/script|<!--/i.test(text)) throw new Error(`${what} cannot be inlined in report.html: it holds </script or <!--`);
  return { text, hash: `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'` };
}

/** A package's browser build `file`, beside the module its entry point resolves to (`entry`, in its `build/`). */
function browserBuild(entry: string, file: string): PageScript {
  const path = join(dirname(entry), file);
  return pageScript(readFileSync(path, 'utf8').trimEnd(), path);
}

/**
 * Shows each `figure[data-chart]` live: its compiled Vega spec (from the JSON
 * in `#chart-specs`) embedded with tooltips and the expression interpreter,
 * the static SVG removed once the view is drawn (the figure is then
 * `is-live`). A chart that cannot be drawn keeps its SVG, is `not-live`, and
 * says why on the console.
 */
const BOOT = `(function () {
  'use strict';
  var specs = JSON.parse(document.getElementById('chart-specs').textContent);
  var figures = document.querySelectorAll('figure[data-chart]');
  for (var i = 0; i < figures.length; i++) show(figures[i]);
  function show(figure) {
    var name = figure.getAttribute('data-chart');
    if (!specs[name]) return;
    var live = document.createElement('div');
    live.className = 'live';
    live.hidden = true;
    figure.appendChild(live);
    vegaEmbed(live, specs[name], { mode: 'vega', renderer: 'svg', actions: false, ast: true }).then(function () {
      var still = figure.querySelector('.static');
      if (still) figure.removeChild(still);
      live.hidden = false;
      figure.classList.add('is-live');
    }, function (error) {
      figure.removeChild(live);
      figure.classList.add('not-live');
      console.error('chart ' + name + ' could not be shown live: ' + error);
    });
  }
})();`;

let runtime: readonly PageScript[] | undefined;

/** The scripts report.html runs, in order: Vega, vega-embed, then the page's own (read from the installed packages once). */
export function liveScripts(): readonly PageScript[] {
  runtime ??= [browserBuild(require.resolve('vega'), 'vega.min.js'), browserBuild(require.resolve('vega-embed'), 'vega-embed.min.js'), pageScript(BOOT, 'the page script')];
  return runtime;
}

/** JSON for a `<script type="application/json">` element: `<` escaped, so no text in it can close the element. */
export function inlineJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}
