// sluice dashboard: the page's only script (no framework, no build step). Three jobs:
// 1. a destructive action's form asks first and only then sets `confirmed` (the server refuses it without);
//    a bulk form (rows ticked by checkbox) says how many it acts on, and keeps the page from refreshing;
// 2. the page's data refreshes itself: every refreshMs (jittered ±20%) the page is fetched again and
//    <main> replaced, unless the tab is hidden or the operator is typing in a form;
// 3. throughput charts (uPlot, shipped with the package) are drawn from the JSON the server embedded.

document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  // A bulk form's buttons each ask their own question; {n} is how many rows are ticked.
  const button = event.submitter;
  let question = button?.dataset.confirm ?? form.dataset.confirm;
  if (!question) return;
  if (form.getAttribute('id') === 'bulk' && button?.dataset.scope === 'selected') {
    const n = tickedRows().length;
    if (n === 0) {
      event.preventDefault();
      window.alert('Select one or more jobs first.');
      return;
    }
    question = question.replace('{n}', String(n));
  }
  if (!window.confirm(question)) {
    event.preventDefault();
    return;
  }
  const field = form.querySelector('input[name="confirmed"]');
  if (field) field.value = 'yes';
});

function tickedRows() {
  return document.querySelectorAll('input[type="checkbox"][form="bulk"][name="id"]:checked');
}

// Ticking: a header box ticks every row shown; the bar counts what is ticked.
document.addEventListener('change', (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || box.type !== 'checkbox') return;
  if (box.classList.contains('select-all'))
    for (const row of box.closest('table')?.querySelectorAll('input[form="bulk"][name="id"]') ?? [])
      row.checked = box.checked;
  const count = document.querySelector('#bulk .bulk-count');
  if (count) count.textContent = String(tickedRows().length);
});

/** Line colours, in series order. */
const COLOURS = ['#2f6fdf', '#c0392b', '#27ae60', '#8e44ad', '#d35400', '#16a085', '#7f8c8d', '#2c3e50', '#b7950b'];

/**
 * Draws each .chart[data-series] from the JSON script it names: either { bucketSeconds, unit,
 * series: [{ label, values }] } or a throughput's { bucketSeconds, finished, died }. A null value
 * is a gap (no job in that bucket).
 */
function drawCharts() {
  if (typeof window.uPlot !== 'function') return;
  for (const box of document.querySelectorAll('.chart[data-series]')) {
    const source = document.getElementById(box.dataset.series);
    if (!source) continue;
    const data = JSON.parse(source.textContent);
    const lines = data.series ?? [
      { label: 'finished', values: data.finished },
      { label: 'dead', values: data.died },
    ];
    const n = lines[0]?.values.length ?? 0;
    const x = Array.from({ length: n }, (_, i) => i - (n - 1));
    const unit = data.bucketSeconds >= 3600 ? 'h' : 'min';
    box.replaceChildren();
    const width = Math.max(280, box.clientWidth || 480);
    new window.uPlot(
      {
        width,
        height: 180,
        scales: { x: { time: false } },
        axes: [
          { values: (_, ticks) => ticks.map((t) => (t === 0 ? 'now' : `${t} ${unit}`)) },
          data.unit === 'ms' ? { values: (_, ticks) => ticks.map((t) => `${t} ms`), size: 70 } : {},
        ],
        series: [
          {},
          ...lines.map((line, i) => ({
            label: line.label,
            stroke: COLOURS[i % COLOURS.length],
            fill: i === 0 && !data.series ? 'rgba(47,111,223,0.12)' : undefined,
            spanGaps: false,
          })),
        ],
      },
      [x, ...lines.map((line) => line.values)],
      box,
    );
  }
}

/** "12 s", "4 min", "3.5 h", "2.0 d": as the server writes durations (format.ts). */
function span(ms) {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${(ms / 3_600_000).toFixed(1)} h`;
  return `${(ms / 86_400_000).toFixed(1)} d`;
}

/**
 * Writes each time the server sent (<time datetime>, its exact UTC time as text and title)
 * relative to now on this browser's clock: "3 min ago", "in 20 s". The title keeps the exact time.
 */
function relativeTimes() {
  const now = Date.now();
  for (const el of document.querySelectorAll('time[datetime]')) {
    const at = Date.parse(el.getAttribute('datetime') ?? '');
    if (Number.isNaN(at)) continue;
    const ms = at - now;
    el.textContent = Math.abs(ms) < 1000 ? 'just now' : ms < 0 ? `${span(-ms)} ago` : `in ${span(ms)}`;
  }
}

let refreshes = 0;
async function refresh() {
  const main = document.getElementById('content');
  const focused = document.activeElement;
  // Typing in a form, or jobs ticked for a bulk action: a fresh rendering would drop what they did.
  const typing =
    focused && main?.contains(focused) && focused.matches('input:not([type="checkbox"]), select, textarea');
  const busy = typing || tickedRows().length > 0;
  if (document.visibilityState === 'visible' && main && !busy) {
    try {
      const response = await fetch(window.location.href, {
        credentials: 'same-origin',
        headers: { 'X-Sluice-Refresh': '1' },
      });
      if (response.ok) {
        const next = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById('content');
        if (next) {
          main.replaceChildren(...Array.from(next.childNodes, (node) => document.importNode(node, true)));
          drawCharts();
          relativeTimes();
          refreshes += 1;
          document.body.dataset.refreshes = String(refreshes);
        }
      }
    } catch {
      // The server is away for a moment: keep what is shown and try again at the next tick.
    }
  }
  schedule();
}

function schedule() {
  const every = Number(document.body.dataset.refreshMs) || 5000;
  setTimeout(refresh, every * (0.8 + Math.random() * 0.4));
}

drawCharts();
relativeTimes();
schedule();
