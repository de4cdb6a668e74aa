// Hand-written SVG charts: vertical bars (a row of values), horizontal bars
// (the benchmark) and lines (the residual stream). Each chart is drawn at
// its container's pixel width, so text stays readable at phone width, and is
// redrawn when that width changes. The SVG carries a text summary for screen
// readers (role="img" + aria-label).

const NS = 'http://www.w3.org/2000/svg';
const FONT = 12;

function el(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

const drawers = new WeakMap(); // host -> { draw, width }
let observer = null; // made on first use, so this module also loads outside a browser

function onResize(entries) {
  for (const { target } of entries) {
    const state = drawers.get(target);
    // Redraw only on a width change: the new SVG changes the height, which
    // must not trigger another round.
    if (state && target.clientWidth !== state.width) requestAnimationFrame(() => render(target));
  }
}

function render(host) {
  const state = drawers.get(host);
  state.width = host.clientWidth;
  host.replaceChildren(state.draw(Math.max(state.width, 200)));
}

/** Draws `draw(width) → <svg>` into `host` now and whenever its width changes. */
function mount(host, draw) {
  observer ??= new ResizeObserver(onResize);
  if (!drawers.has(host)) observer.observe(host);
  drawers.set(host, { draw, width: 0 });
  render(host);
}

function svgRoot(width, height, label) {
  return el('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label });
}

/**
 * Vertical bars around a zero line: one bar per value, `labels` under them,
 * `format(v)` over them.
 */
export function barChart(host, { values, labels, format, label, className = '' }) {
  mount(host, (width) => {
    const height = 170;
    const top = FONT + 6; // room for a value label over the highest bar
    const bottom = height - 2 * FONT - 12; // and under the lowest, above the index labels
    const finite = [...values].filter(Number.isFinite);
    const hi = Math.max(0, ...finite);
    const lo = Math.min(0, ...finite);
    const span = hi - lo || 1;
    const y = (v) => top + ((hi - v) / span) * (bottom - top);
    const svg = svgRoot(width, height, label);
    const slot = width / values.length;
    const barWidth = Math.min(48, slot * 0.7);
    values.forEach((v, i) => {
      const cx = slot * (i + 0.5);
      const v0 = Number.isFinite(v) ? v : 0;
      const y0 = Math.min(y(0), y(v0));
      svg.append(el('rect', {
        class: `bar ${className} ${v0 < 0 ? 'neg' : ''}`,
        x: cx - barWidth / 2, y: y0, width: barWidth, height: Math.max(1, Math.abs(y(v0) - y(0))),
      }));
      if (values.length <= 16) {
        const above = v0 >= 0;
        svg.append(el('text', {
          x: cx, y: above ? y0 - 3 : y0 + Math.abs(y(v0) - y(0)) + FONT, 'text-anchor': 'middle', class: 'value',
        }, format(v)));
        svg.append(el('text', { x: cx, y: height - 4, 'text-anchor': 'middle', class: 'tick' }, labels[i]));
      }
    });
    svg.append(el('line', { x1: 0, x2: width, y1: y(0), y2: y(0), class: 'axis' }));
    return svg;
  });
}

/**
 * Horizontal bars, one per row: `{ label, value, text, className }`, the
 * largest value spanning the width; label left and text right above each bar.
 */
export function hbarChart(host, { rows, label }) {
  mount(host, (width) => {
    const rowHeight = 2 * FONT + 14;
    const height = rows.length * rowHeight + 4;
    const max = Math.max(...rows.map((r) => r.value));
    const svg = svgRoot(width, height, label);
    rows.forEach((row, i) => {
      const y0 = i * rowHeight + 2;
      svg.append(el('text', { x: 0, y: y0 + FONT, class: 'tick' }, row.label));
      svg.append(el('text', { x: width, y: y0 + FONT, 'text-anchor': 'end', class: 'value' }, row.text));
      svg.append(el('rect', {
        class: `bar ${row.className ?? ''}`, x: 0, y: y0 + FONT + 5, height: FONT + 2,
        width: Math.max(2, (row.value / max) * width),
      }));
    });
    return svg;
  });
}

/**
 * Lines over x = 0 … n-1 on a log-scale y axis: `series` of
 * `{ name, values, className }`.
 */
export function logLineChart(host, { series, xLabel, yLabel, label }) {
  mount(host, (width) => {
    const height = Math.round(Math.min(320, Math.max(220, width * 0.5)));
    const left = 44;
    const right = 8;
    const top = 8;
    const bottom = height - 2 * FONT - 10;
    const all = series.flatMap((s) => s.values).filter((v) => v > 0 && Number.isFinite(v));
    const lo = Math.floor(Math.log10(Math.min(...all)));
    const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...all))));
    const n = Math.max(...series.map((s) => s.values.length));
    const x = (i) => left + (i / Math.max(1, n - 1)) * (width - left - right);
    const y = (v) => bottom - ((Math.log10(v) - lo) / (hi - lo)) * (bottom - top);
    const svg = svgRoot(width, height, label);
    const step = Math.ceil((hi - lo) / 6);
    for (let p = lo; p <= hi; p += step) {
      svg.append(el('line', { x1: left, x2: width - right, y1: y(10 ** p), y2: y(10 ** p), class: 'grid' }));
      svg.append(el('text', { x: left - 4, y: y(10 ** p) + 4, 'text-anchor': 'end', class: 'tick' }, p === 0 ? '1' : `1e${p}`));
    }
    const xStep = Math.max(1, Math.ceil((n - 1) / Math.max(2, Math.floor((width - left) / 40))));
    for (let i = 0; i < n; i += xStep) {
      svg.append(el('text', { x: x(i), y: bottom + FONT + 4, 'text-anchor': 'middle', class: 'tick' }, String(i)));
    }
    svg.append(el('text', { x: (left + width) / 2, y: height - 2, 'text-anchor': 'middle', class: 'tick' }, xLabel));
    svg.append(el('text', { x: 0, y: 0, class: 'tick', transform: `translate(10 ${(top + bottom) / 2}) rotate(-90)`, 'text-anchor': 'middle' }, yLabel));
    svg.append(el('line', { x1: left, x2: left, y1: top, y2: bottom, class: 'axis' }));
    svg.append(el('line', { x1: left, x2: width - right, y1: bottom, y2: bottom, class: 'axis' }));
    for (const s of series) {
      const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
      svg.append(el('polyline', { points, class: `line ${s.className}`, fill: 'none' }));
      s.values.forEach((v, i) => svg.append(el('circle', { cx: x(i), cy: y(v), r: 2.5, class: `dot ${s.className}` })));
    }
    return svg;
  });
}
