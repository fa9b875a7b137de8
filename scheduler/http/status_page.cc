#include "scheduler/http/status_page.h"

#include "absl/strings/str_cat.h"

namespace herald::scheduler {
namespace {

constexpr char kStyle[] = R"css(
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f5f6f8; }
  header { background: #1d2330; color: #fff; padding: 10px 16px; display: flex; gap: 16px;
           align-items: baseline; flex-wrap: wrap; }
  header h1 { font-size: 18px; margin: 0; }
  main { padding: 12px 16px; }
  section { background: #fff; border-radius: 6px; padding: 10px 12px; margin-bottom: 12px;
            box-shadow: 0 1px 2px rgba(0,0,0,.08); overflow-x: auto; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #e4e6ea; white-space: nowrap; }
  tr.job { cursor: pointer; } tr.selected { background: #e8f0fe; }
  .dead { color: #b3261e; font-weight: 600; } .alive { color: #1e7d32; }
  .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 12px; }
  .chart { position: relative; height: 240px; }
  pre { white-space: pre-wrap; word-break: break-all; font-size: 12px; max-height: 240px; overflow: auto; }
  .muted { color: #6b7280; }
)css";

constexpr char kScript[] = R"js(
// A worker's time per step: [JobStatus field prefix, what the time was].
const phases = [['step_wait', 'waiting for the scheduler'], ['fetch', 'waiting for the PS (fetch)'],
                ['compute', 'device'], ['allreduce', 'all-reduce'], ['push', 'push (waiting for the PS)'],
                ['writeback', 'write-back (waiting for the PS)'], ['decode', 'decoding the step'],
                ['stage', 'checking and staging the step'], ['commit', 'commit (waiting for the PS)'],
                ['report', 'reporting the step']];
const colors = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
                '#ff9da7', '#9c755f', '#bab0ac', '#86bcb6'];
let selected = null;
const charts = {};
const el = (tag, attrs = {}, text = '') => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== '') e.textContent = text;
  return e;
};
const num = (x) => Number(x || 0);
function row(cells, attrs = {}) {
  const tr = el('tr', attrs);
  for (const c of cells) tr.appendChild(el('td', {}, String(c)));
  return tr;
}
function drawNodes(nodes) {
  const body = document.getElementById('nodes');
  body.replaceChildren();
  const now = Date.now();
  for (const n of nodes) {
    const tr = row([n.node_id, n.role === 'NODE_ROLE_PS' ? 'ps' : 'worker', n.rank, n.address,
                    n.role === 'NODE_ROLE_PS' ? '—' : (n.device || '').replace('DEVICE_KIND_', '').toLowerCase(),
                    ((now - num(n.last_heartbeat_unix_ms)) / 1000).toFixed(1) + ' s ago']);
    tr.appendChild(el('td', {class: n.alive ? 'alive' : 'dead'}, n.alive ? 'alive' : 'DEAD'));
    body.appendChild(tr);
  }
}
function drawJobs(jobs) {
  const body = document.getElementById('jobs');
  body.replaceChildren();
  for (const j of jobs) {
    const p = j.progress || {};
    const total = num(p.total_iterations) ? '/' + p.total_iterations : '';
    const tr = row([j.job_id, j.name, (j.state || '').replace('JOB_', ''), num(p.iteration) + total,
                    num(p.samples_per_second).toFixed(0), num(p.loss).toFixed(5),
                    (100 * num(p.cache_hit_rate)).toFixed(1) + '%', j.reason || ''],
                   {class: 'job' + (j.job_id === selected ? ' selected' : '')});
    tr.onclick = () => { selected = j.job_id; refresh(); };
    body.appendChild(tr);
  }
}
// A history point of training (not an evaluation's point alone).
function trained(p) { return (p.workers || []).length > 0; }
function chart(id, title, datasets, labels, stacked) {
  const canvas = document.getElementById(id);
  canvas.dataset.points = labels.length;
  canvas.dataset.series = datasets.map((d) => d.label).join('|');
  if (typeof Chart === 'undefined') return;
  if (!charts[id]) {
    charts[id] = new Chart(canvas, {
      type: 'line',
      data: {labels, datasets},
      options: {animation: false, responsive: true, maintainAspectRatio: false,
                plugins: {title: {display: true, text: title}},
                elements: {point: {radius: labels.length > 40 ? 0 : 2}},
                scales: {x: {title: {display: true, text: 'iteration'}},
                         y: {stacked: !!stacked, beginAtZero: true}}}});
  } else {
    charts[id].data.labels = labels;
    charts[id].data.datasets = datasets;
    charts[id].update();
  }
}
function series(label, values, i, fill) {
  return {label, data: values, borderColor: colors[i % colors.length],
          backgroundColor: colors[i % colors.length] + (fill ? '99' : ''), fill: !!fill,
          borderWidth: 1.5};
}
function ensureWorkerCharts(n) {
  const box = document.getElementById('charts');
  for (let w = 0; w < n; ++w) {
    const id = 'chart-phases-' + w;
    if (document.getElementById(id)) continue;
    const div = el('div', {class: 'chart'});
    div.appendChild(el('canvas', {id}));
    box.appendChild(div);
  }
}
function drawJob(job) {
  document.body.dataset.job = job ? job.job_id : '';
  document.getElementById('job-title').textContent =
      job ? job.job_id + ' · ' + job.name + ' · ' + (job.state || '').replace('JOB_', '') : '—';
  document.getElementById('spec').textContent = job ? JSON.stringify(job.spec || {}, null, 1) : '';
  const p = job ? (job.progress || {}) : {};
  document.getElementById('checkpoint').textContent = num(p.checkpoints_written)
      ? num(p.checkpoints_written) + ' checkpoint(s), waited ' + (num(p.checkpoint_ms) / 1000).toFixed(1) +
        ' s; last: ' + p.last_checkpoint +
        (num(p.checkpoint_failures) ? '; ' + num(p.checkpoint_failures) + ' refused by the storage: ' +
        p.checkpoint_error : '')
      : '';
  const consistency = job ? (job.model_consistency || '') : '';
  document.getElementById('consistency').textContent =
      consistency && consistency !== 'synchronous SGD' ? 'model: ' + consistency : '';
  const causes = job ? (job.recovery_causes || []) : [];
  document.getElementById('recovery').textContent = num(job && job.recoveries)
      ? 'recovered ' + num(job.recoveries) + ' time(s)' + (p.resumed_from ? ', last from ' + p.resumed_from : '') +
        '; after: ' + causes.join('; ')
      : '';
  // Each judged label's figures: AUC and log loss of a binary label, RMSE
  // of a regression label (named when there are several).
  const labels = p.eval_labels || [];
  const figures = (m) => (labels.length > 1 ? m.label + ': ' : '') + (m.regression
      ? 'RMSE ' + num(m.rmse).toFixed(4)
      : 'AUC ' + num(m.auc).toFixed(4) + ', log loss ' + num(m.logloss).toFixed(4));
  const scored = (p.eval_files || []).length
      ? 'new file ' + p.eval_files.join(', ') + ' before training on it: ' : 'held-out ';
  document.getElementById('eval').textContent = num(p.evals_done)
      ? scored + (labels.length ? labels.map(figures).join('; ')
                                     : figures({auc: p.eval_auc, logloss: p.eval_logloss})) +
        ' after iteration ' + num(p.eval_iteration) + ' (' + num(p.eval_samples) + ' samples; ' +
        num(p.evals_done) + ' evaluation(s), ' + (num(p.eval_ms) / 1000).toFixed(1) + ' s)'
      : '';
  const all = job ? (job.history || []) : [];
  const evals = all.filter((p) => p.eval_auc !== undefined || (p.eval_labels || []).length);
  const rmse = (name) => evals.map((p) => num(((p.eval_labels || []).find((m) => m.label === name) || {}).rmse));
  const binary = evals.some((p) => p.eval_auc !== undefined);
  const byFile = evals.some((p) => (p.eval_files || []).length);
  chart('chart-eval', byFile ? 'each new file, before it trains' : 'held-out metrics', (binary ? [
    series('AUC', evals.map((p) => num(p.eval_auc)), 0),
    series('log loss', evals.map((p) => num(p.eval_logloss)), 2)] : []).concat(
    labels.filter((m) => m.regression).map((m, i) => series('RMSE ' + m.label, rmse(m.label), 3 + i))),
    evals.map((p) => num(p.iteration)));
  const h = all.filter(trained);
  const it = h.map((p) => num(p.iteration));
  chart('chart-loss', 'loss', [series('loss', h.map((p) => num(p.loss)), 0)], it);
  chart('chart-speed', 'samples/s', [series('samples/s', h.map((p) => num(p.samples_per_second)), 1)], it);
  chart('chart-rows', 'rows moved per iteration', [
    series('fetched', h.map((p) => num(p.rows_fetched)), 0, true),
    series('pushed', h.map((p) => num(p.rows_pushed)), 1, true),
    series('written back', h.map((p) => num(p.rows_written_back)), 2, true),
    series('worker to worker', h.map((p) => num(p.rows_transferred)), 3, true)], it, true);
  // Shown only for jobs whose rows beyond the shards' memory budget are on disk.
  const tiered = h.some((p) => num(p.ps_disk_rows_critical) + num(p.ps_disk_rows_ahead) > 0);
  document.getElementById('chart-disk-box').hidden = !tiered;
  if (tiered) {
    chart('chart-disk', 'PS rows read from disk per iteration', [
      series('while a request waited', h.map((p) => num(p.ps_disk_rows_critical)), 1, true),
      series('ahead (look-ahead)', h.map((p) => num(p.ps_disk_rows_ahead)), 0, true)], it, true);
  }
  // Shown only for jobs with id admission or row expiry.
  const lifecycle = h.some((p) => num(p.keys_admitted) + num(p.rows_expired) > 0);
  document.getElementById('chart-keys-box').hidden = !lifecycle;
  if (lifecycle) {
    chart('chart-keys', 'table rows (keys admitted) and rows expired per iteration', [
      series('table rows', h.map((p) => num(p.keys_admitted)), 0),
      series('expired', h.map((p) => num(p.rows_expired)), 2, true)], it);
  }
  chart('chart-vanilla', 'rows moved vs the vanilla estimate', [
    series('herald', h.map((p) => num(p.rows_fetched) + num(p.rows_pushed) +
                                  num(p.rows_written_back) + num(p.rows_transferred)), 0),
    series('vanilla (estimate)', h.map((p) => num(p.rows_vanilla)), 2)], it);
  chart('chart-hit', 'cache hit rate', [series('hit rate', h.map((p) => num(p.cache_hit_rate)), 4)], it);
  const workers = h.length ? (h[0].workers || []).length : 0;
  ensureWorkerCharts(workers);
  for (let w = 0; w < workers; ++w) {
    const of = (p) => (p.workers || [])[w] || {};
    // The phases stacked (the step's time), and the device's own time of
    // its training (device events) as a line of its own, not stacked.
    chart('chart-phases-' + w, 'worker ' + w + ': ms per step, waiting and working',
          phases.map(([ph, label], i) => series(label, h.map((p) => num(of(p)[ph + '_ms'])), i, true))
              .concat([Object.assign(series('device time (events)', h.map((p) => num(of(p).device_ms)),
                                            phases.length), {stack: 'device', borderDash: [4, 3]})]),
          it, true);
  }
}
async function refresh() {
  try {
    const res = await fetch('/api/status', {credentials: 'same-origin', cache: 'no-store'});
    if (res.status === 401) { location.href = '/'; return; }
    const data = await res.json();
    const jobs = (data.jobs && data.jobs.jobs) || [];
    const nodes = (data.nodes && data.nodes.nodes) || [];
    if (!selected || !jobs.some((j) => j.job_id === selected)) {
      const running = jobs.find((j) => j.state === 'JOB_RUNNING');
      selected = running ? running.job_id : (jobs.length ? jobs[jobs.length - 1].job_id : null);
    }
    drawNodes(nodes);
    drawJobs(jobs);
    drawJob(jobs.find((j) => j.job_id === selected));
    document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString() +
        (typeof Chart === 'undefined' ? ' · charts unavailable (no /chart.js: install libjs-chart.js)' : '');
    document.body.dataset.refreshed = String(num(document.body.dataset.refreshed) + 1);
  } catch (e) {
    document.getElementById('updated').textContent = 'cannot reach the scheduler: ' + e;
  }
}
refresh();
setInterval(refresh, 2000);
)js";

constexpr char kBody[] = R"html(
<header><h1>Herald</h1><span id="updated" class="muted">loading…</span></header>
<main>
<section><h2>Nodes</h2><table><thead><tr><th>node</th><th>role</th><th>rank</th><th>address</th>
<th>device</th><th>heartbeat</th><th>health</th></tr></thead><tbody id="nodes"></tbody></table></section>
<section><h2>Jobs</h2><table><thead><tr><th>job</th><th>name</th><th>state</th><th>iteration</th>
<th>samples/s</th><th>loss</th><th>hit</th><th>reason</th></tr></thead><tbody id="jobs"></tbody></table></section>
<section><h2 id="job-title">—</h2><p id="consistency" class="dead"></p><p id="eval"></p><p id="recovery" class="dead"></p><p id="checkpoint" class="muted"></p>
<div class="charts" id="charts">
<div class="chart"><canvas id="chart-loss"></canvas></div>
<div class="chart"><canvas id="chart-eval"></canvas></div>
<div class="chart"><canvas id="chart-speed"></canvas></div>
<div class="chart"><canvas id="chart-rows"></canvas></div>
<div class="chart"><canvas id="chart-vanilla"></canvas></div>
<div class="chart" id="chart-disk-box" hidden><canvas id="chart-disk"></canvas></div>
<div class="chart" id="chart-keys-box" hidden><canvas id="chart-keys"></canvas></div>
<div class="chart"><canvas id="chart-hit"></canvas></div>
</div>
<details><summary>spec</summary><pre id="spec"></pre></details>
</section>
</main>
)html";

}  // namespace

const char* StatusPageHtml() {
  static const std::string* page = new std::string(
      absl::StrCat("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                   "<title>Herald</title><style>",
                   kStyle, "</style><script src=\"/chart.js\"></script></head><body>", kBody,
                   "<script>", kScript, "</script></body></html>"));
  return page->c_str();
}

std::string LoginPageHtml(const std::string& error) {
  return absl::StrCat(
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>Herald · sign in</title><style>",
      kStyle, "</style></head><body><header><h1>Herald</h1></header><main><section>",
      "<h2>This cluster requires its token</h2>",
      error.empty() ? "" : "<p class=\"dead\">wrong token</p>",
      "<form method=\"post\" action=\"/login\"><input type=\"password\" name=\"token\" "
      "autocomplete=\"current-password\" size=\"40\" placeholder=\"cluster token\"> "
      "<button type=\"submit\">open</button></form></section></main></body></html>");
}

}  // namespace herald::scheduler
