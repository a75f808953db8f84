// The jdf2go dashboard page: it reads the snapshot stream (/api/stream, Server-Sent Events)
// and draws it. Every snapshot holds the run's totals at one instant plus what happened since
// the previous one (worker lane segments, errors), so replaying the stream rebuilds the run.
"use strict";

const state = {
  rates: [],       // [time, tasks/s] per snapshot
  segments: [],    // worker lane segments inside the window
  firstT: null,    // start of the first segment seen: a short run fills the lanes' width
  running: [],     // tasks running at the last snapshot
  colors: new Map(),
  last: null,      // last snapshot
  errors: 0,
  busySum: [],     // per worker: busy seconds over the whole run (from the snapshots' Busy)
  drawnSegments: 0, // segments drawn by the last lanes paint (read by the browser test)
  drawnPoints: 0,   // points drawn by the last chart paint
};
window.dashboard = state;

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function colorOf(name) {
  let c = state.colors.get(name);
  if (!c) {
    // Golden-angle hues: neighbouring classes get distant colours.
    const hue = (state.colors.size * 137.508 + 210) % 360;
    c = `hsl(${hue.toFixed(0)}, 62%, 52%)`;
    state.colors.set(name, c);
  }
  return c;
}

function fmtNum(v) {
  if (v >= 1e9) return (v / 1e9).toFixed(2) + " G";
  if (v >= 1e6) return (v / 1e6).toFixed(2) + " M";
  if (v >= 1e4) return (v / 1e3).toFixed(1) + " k";
  return String(Math.round(v));
}

function fmtBytes(v) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(1) : String(v)) + " " + u[i];
}

function fmtTime(s) {
  if (s < 60) return s.toFixed(1) + " s";
  const m = Math.floor(s / 60);
  return m + " min " + Math.round(s - 60 * m) + " s";
}

// sizeCanvas matches the canvas's backing store to its displayed size.
function sizeCanvas(c) {
  const r = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(c.clientWidth * r));
  const h = Math.max(1, Math.round(c.clientHeight * r));
  if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
  const g = c.getContext("2d");
  g.setTransform(r, 0, 0, r, 0, 0);
  return [g, c.clientWidth, c.clientHeight];
}

function drawChart() {
  const c = $("chart");
  const [g, w, h] = sizeCanvas(c);
  g.clearRect(0, 0, w, h);
  const pts = state.rates;
  const left = 48, bottom = 20, top = 8, right = 8;
  const pw = w - left - right, ph = h - top - bottom;
  let t0 = pts.length ? pts[0][0] : 0, t1 = pts.length ? pts[pts.length - 1][0] : 1;
  if (t1 <= t0) t1 = t0 + 1;
  let ymax = 1;
  for (const p of pts) ymax = Math.max(ymax, p[1]);
  ymax *= 1.1;
  g.strokeStyle = "#dde2ea"; g.fillStyle = "#6b7585"; g.font = "11px system-ui, sans-serif";
  g.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const y = top + ph - (ph * i) / 4;
    g.beginPath(); g.moveTo(left, y); g.lineTo(left + pw, y); g.stroke();
    g.fillText(fmtNum((ymax * i) / 4), 2, y + 4);
  }
  g.fillText(fmtTime(t0), left, h - 4);
  const endLabel = fmtTime(t1);
  g.fillText(endLabel, left + pw - g.measureText(endLabel).width, h - 4);
  if (pts.length < 2) { state.drawnPoints = pts.length; c.dataset.points = pts.length; return; }
  const x = (t) => left + ((t - t0) / (t1 - t0)) * pw;
  const y = (v) => top + ph - (v / ymax) * ph;
  g.beginPath();
  g.moveTo(x(pts[0][0]), y(0));
  for (const p of pts) g.lineTo(x(p[0]), y(p[1]));
  g.lineTo(x(pts[pts.length - 1][0]), y(0));
  g.closePath();
  g.fillStyle = "rgba(45, 108, 223, 0.18)"; g.fill();
  g.beginPath();
  pts.forEach((p, i) => (i ? g.lineTo(x(p[0]), y(p[1])) : g.moveTo(x(p[0]), y(p[1]))));
  g.strokeStyle = "#2d6cdf"; g.lineWidth = 1.5; g.stroke();
  state.drawnPoints = pts.length;
  c.dataset.points = pts.length;
}

function drawLanes() {
  const s = state.last;
  const c = $("lanes");
  const n = s ? s.workers : 0;
  const rowH = 18, gap = 3, left = 70, right = 8, bottom = 18;
  c.style.height = Math.max(40, n * (rowH + gap) + bottom) + "px";
  const [g, w, h] = sizeCanvas(c);
  g.clearRect(0, 0, w, h);
  if (!s) return;
  const win = s.window || 30;
  const t1 = s.t, t0 = Math.max(0, t1 - win, state.firstT === null ? 0 : state.firstT);
  const span = Math.max(t1 - t0, 1e-3);
  const pw = w - left - right;
  const x = (t) => left + ((t - t0) / span) * pw;
  g.font = "11px system-ui, sans-serif";
  for (let i = 0; i < n; i++) {
    const y = i * (rowH + gap);
    g.fillStyle = "#eef1f5"; g.fillRect(left, y, pw, rowH);
    g.fillStyle = "#1d2430";
    const b = s.finished && s.t > 0 ? (state.busySum[i] || 0) / s.t : s.busy && s.busy[i];
    const busy = b !== undefined ? ` ${Math.round(100 * b)}%` : "";
    g.fillText(`w${i}${busy}`, 2, y + 13);
  }
  let drawn = 0;
  const paint = (seg) => {
    if (seg.e < t0 || seg.w >= n || seg.w < 0) return;
    const a = x(Math.max(seg.s, t0)), b = x(Math.min(seg.e, t1));
    g.fillStyle = colorOf(seg.c);
    g.fillRect(a, seg.w * (rowH + gap), Math.max(b - a, 1), rowH);
    drawn++;
  };
  state.segments.forEach(paint);
  state.running.forEach(paint);
  g.fillStyle = "#6b7585";
  g.fillText(fmtTime(t0), left, h - 4);
  const endLabel = fmtTime(t1);
  g.fillText(endLabel, left + pw - g.measureText(endLabel).width, h - 4);
  state.drawnSegments = drawn;
  c.dataset.segments = drawn;
}

function renderClasses(s) {
  const box = $("classes");
  const rows = [];
  for (const k of s.classes || []) {
    const row = el("div", "bar");
    const pct = k.total > 0 ? (100 * k.done) / k.total : 0;
    row.dataset.class = k.name;
    row.dataset.pct = pct.toFixed(1);
    const name = el("span", "name", k.taskpool ? `${k.taskpool} · ${k.name}` : k.name);
    name.title = name.textContent;
    const track = el("div", "track");
    const fill = el("div", "fill");
    fill.style.width = Math.min(100, pct).toFixed(2) + "%";
    fill.style.background = colorOf(k.name);
    track.append(fill);
    row.append(name, track, el("span", "count", `${fmtNum(k.done)} / ${fmtNum(k.total)} · ${Math.floor(pct)}%`));
    rows.push(row);
  }
  box.replaceChildren(...rows);
  const legend = [];
  for (const [name, color] of state.colors) {
    const item = el("span", null, name);
    item.style.setProperty("--c", color);
    legend.push(item);
  }
  legend.push(el("span", "dim", "gaps: idle"));
  $("legend").replaceChildren(...legend);
}

function table(head, rows) {
  const t = el("table");
  const tr = el("tr");
  for (const h of head) tr.append(el("th", null, h));
  t.append(tr);
  for (const r of rows) {
    const row = el("tr");
    for (const v of r) row.append(el("td", null, String(v)));
    t.append(row);
  }
  return t;
}

function renderGPUs(s) {
  const gpus = s.gpus || [];
  $("gpu-panel").hidden = gpus.length === 0;
  const out = [];
  for (const d of gpus) {
    const box = el("div", "gpu");
    box.append(el("h3", null, d.name));
    const mem = d.memLimit > 0 ? `${fmtBytes(d.memUsed)} of ${fmtBytes(d.memLimit)}` : fmtBytes(d.memUsed);
    const batch = d.batches > 0 ? (d.batched / d.batches).toFixed(2) : "–";
    // A trace has no sizes: its transfers are counted, their bytes are unknown.
    const moved = (n, bytes) => (bytes > 0 || n === 0 ? `${fmtNum(n)} · ${fmtBytes(bytes)}` : fmtNum(n));
    box.append(table(["tasks", "mean batch", "staged in", "staged out", "memory"], [[
      fmtNum(d.executed), batch, moved(d.stageIns, d.bytesIn), moved(d.stageOuts, d.bytesOut),
      d.memUsed > 0 || d.memLimit > 0 ? mem : "–"]]));
    if ((d.streams || []).length) {
      box.append(table(["stream", "queued", "in flight"], d.streams.map((q) => [q.name, q.queued, q.inFlight])));
    }
    out.push(box);
  }
  $("gpus").replaceChildren(...out);
}

function renderCE(s) {
  const ce = s.ce;
  $("ce-panel").hidden = !ce;
  if (!ce) return;
  const t = table(["peer", "msgs out", "bytes out", "msgs in", "bytes in"],
    (ce.peers || []).map((p) => [`rank ${p.rank}`, fmtNum(p.msgsOut), fmtBytes(p.bytesOut), fmtNum(p.msgsIn), fmtBytes(p.bytesIn)]));
  $("ce").replaceChildren(el("div", "dim", `rank ${ce.rank}, shift queue: ${ce.shiftQueue}`), t);
}

function renderErrors(s) {
  const list = $("errors");
  for (const e of s.errors || []) {
    const first = e.message.split("\n")[0];
    const li = el("li", null, `${fmtTime(e.t)}  ${e.taskpool ? e.taskpool + ": " : ""}${first}`);
    li.title = e.message;
    list.append(li);
    state.errors++;
  }
  $("nerrors").textContent = state.errors ? String(state.errors) : "none";
}

function renderHeader(s) {
  $("source").textContent = s.source === "live" ? "live run" : s.source;
  $("rank").textContent = s.ranks > 1 ? `rank ${s.rank} of ${s.ranks}` : "";
  const peers = [];
  (s.peers || []).forEach((u, i) => {
    const a = el("a", null, `rank ${i + 1}`);
    a.href = u;
    peers.push(a);
  });
  $("peers").replaceChildren(...peers);
  $("elapsed").textContent = fmtTime(s.t);
  $("done").textContent = fmtNum(s.done);
  $("rate").textContent = fmtNum(s.rate);
  // Live: the last interval; once finished: the whole run.
  const busy = s.finished && s.t > 0 ? state.busySum.map((b) => b / s.t) : s.busy || [];
  const mean = busy.length ? busy.reduce((a, b) => a + b, 0) / busy.length : 0;
  $("busy").textContent = busy.length ? Math.round(100 * mean) + " %" : "–";
  $("busy-label").textContent = s.finished ? "workers busy (run)" : "workers busy";
  $("window").textContent = `(at most the last ${fmtTime(s.window || 30)})`;
  // A replay of a large trace says which of its bounds it reached.
  $("note").hidden = !s.note;
  $("note").textContent = s.note || "";
}

function setStatus(text, cls) {
  const st = $("status");
  st.textContent = text;
  st.className = "status " + cls;
}

let pending = false;
function redraw() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    drawChart();
    drawLanes();
  });
}

function apply(s) {
  const dt = state.last ? s.t - state.last.t : s.t;
  (s.busy || []).forEach((b, i) => { state.busySum[i] = (state.busySum[i] || 0) + b * Math.max(dt, 0); });
  state.last = s;
  for (const seg of (s.lanes || []).concat(s.running || [])) colorOf(seg.c);
  state.rates.push([s.t, s.rate]);
  for (const seg of s.lanes || []) state.segments.push(seg);
  state.running = s.running || [];
  for (const seg of state.segments.concat(state.running)) {
    if (state.firstT === null || seg.s < state.firstT) state.firstT = seg.s;
  }
  const cut = s.t - (s.window || 30);
  if (state.segments.length && state.segments[0].e < cut) state.segments = state.segments.filter((g) => g.e >= cut);
  renderHeader(s);
  renderClasses(s);
  renderGPUs(s);
  renderCE(s);
  renderErrors(s);
  redraw();
  if (s.finished) setStatus("finished", "finished");
  else setStatus("live", "live");
}

function connect() {
  const es = new EventSource("api/stream");
  es.addEventListener("snapshot", (ev) => {
    const s = JSON.parse(ev.data);
    apply(s);
    if (s.finished) es.close();
  });
  es.addEventListener("end", () => {
    es.close();
    if (!state.last || !state.last.finished) setStatus("run ended", "finished");
  });
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) setStatus("disconnected", "lost");
  };
}

window.addEventListener("resize", redraw);
connect();
