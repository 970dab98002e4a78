// lifecyclesim dashboard: plain JavaScript, no build step. The page keeps every object of
// the tenant in memory (a snapshot, then server-sent change events from the engine's change
// feed) and renders only the rows in view, so ten thousand objects stay fast.
'use strict';

const ROW = 30; // px, matches --row in style.css

const S = {
  session: null,
  kinds: [],
  kindByName: new Map(),
  objects: new Map(),
  seq: '',
  es: null,
  filter: { kind: '', state: '', name: '' },
  clockOffset: 0,
  timeScale: 1,
  view: null, // the current view: { name, update(changedIDs), dispose() }
  listeners: new Set(),
};
// Exposed for the browser tests and for curious users in the console.
window.dash = { S, metrics: {} };

const $ = (sel, el = document) => el.querySelector(sel);
const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
const fmtTime = (t) => (t ? new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

function fmtDur(ms) {
  if (!(ms >= 0)) return '';
  if (ms < 1000) return ms + ' ms';
  const s = ms / 1000;
  if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + ' s';
  const m = Math.floor(s / 60);
  if (m < 60) return m + ' min ' + Math.round(s % 60) + ' s';
  return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
}

function toast(msg, bad) {
  const d = document.createElement('div');
  d.textContent = msg;
  if (bad) d.className = 'bad';
  $('#toast').append(d);
  setTimeout(() => d.remove(), bad ? 8000 : 3000);
}

// ---- server calls -------------------------------------------------------------------------

async function call(method, url, body) {
  const opt = { method, credentials: 'same-origin', headers: {} };
  if (method !== 'GET') opt.headers['X-CSRF-Token'] = S.session ? S.session.csrf : '';
  if (body !== undefined) {
    opt.headers['Content-Type'] = 'application/json';
    opt.body = JSON.stringify(body);
  }
  const res = await fetch(url, opt);
  if (res.status === 401 && url !== '/ui/session') {
    showSignIn('Your session ended: sign in again.');
    throw new Error('not signed in');
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!res.ok) {
    const e = data && data.error ? data.error : { code: String(res.status), message: text };
    throw new Error(e.code + ': ' + e.message);
  }
  return data;
}
const api = (method, path, body) => call(method, '/ui/api/v1' + path, body);

// ---- objects and the live stream ----------------------------------------------------------

function kindOf(o) { return S.kindByName.get(o.kind); }
function stateClass(k, st, o) {
  if (!k) return '';
  if (o && o.operation) return 'transition';
  if ((k.states.error || []).includes(st)) return 'error';
  if ((k.states.gone || []).includes(st)) return 'gone';
  if ((k.states.transition || []).includes(st)) return 'transition';
  return '';
}
function badge(o) {
  return `<span class="state ${stateClass(kindOf(o), o.state, o)}" data-state="${esc(o.state)}">${esc(o.state)}</span>`;
}

async function loadSnapshot() {
  const t0 = performance.now();
  const snap = await call('GET', '/ui/snapshot');
  S.objects.clear();
  for (const o of snap.objects) S.objects.set(o.id, o);
  S.seq = snap.seq;
  window.dash.metrics.snapshotMs = performance.now() - t0;
  window.dash.metrics.objects = S.objects.size;
}

function openStream() {
  if (S.es) S.es.close();
  const es = new EventSource('/ui/stream?after=' + encodeURIComponent(S.seq));
  S.es = es;
  es.onopen = () => setLive(true);
  es.addEventListener('change', (ev) => {
    const u = JSON.parse(ev.data);
    const changed = [];
    for (const o of u.objects || []) {
      const cur = S.objects.get(o.id);
      if (!cur || cur.version <= o.version) S.objects.set(o.id, o);
      changed.push(o.id);
    }
    for (const id of u.removed || []) {
      S.objects.delete(id);
      changed.push(id);
    }
    S.seq = u.seq;
    window.dash.metrics.lastEventAt = performance.timeOrigin + performance.now();
    notify(changed);
  });
  es.addEventListener('resync', () => resync());
  es.addEventListener('signedout', () => { es.close(); showSignIn('You signed out.'); });
  es.onerror = () => {
    setLive(false);
    if (es.readyState === EventSource.CLOSED) setTimeout(() => S.es === es && resync(), 2000);
  };
}

async function resync() {
  if (S.es) S.es.close();
  try {
    await loadSnapshot();
    await loadClock();
  } catch (e) {
    toast(String(e.message || e), true);
    setTimeout(resync, 3000);
    return;
  }
  openStream();
  notify(null);
}

function setLive(on) {
  const el = $('#live');
  el.className = 'live ' + (on ? 'on' : 'off');
  el.textContent = on ? 'live' : 'reconnecting';
}

// notify tells the current view what changed (null: everything).
function notify(ids) {
  if (S.view && S.view.update) S.view.update(ids);
}

// ---- clock --------------------------------------------------------------------------------

async function loadClock() {
  const c = await api('GET', '/sim/clock');
  S.clockOffset = new Date(c.now).getTime() - Date.now();
  S.timeScale = c.time_scale;
  tickClock();
}
function simNow() { return new Date(Date.now() + S.clockOffset); }
function tickClock() {
  $('#clock').textContent = 'sim clock ' + fmtTime(simNow()) + ' · time scale ' + S.timeScale;
}

// ---- sign-in ------------------------------------------------------------------------------

function showSignIn(msg) {
  if (S.es) { S.es.close(); S.es = null; }
  S.session = null;
  setView(null);
  $('#nav').hidden = true;
  $('#signout').hidden = true;
  $('#who').textContent = '';
  $('#view').innerHTML = `
    <div class="signin card">
      <h1>Sign in</h1>
      <p class="muted">This simulator has tokens: sign in with one to see its tenant's objects.</p>
      ${msg ? `<p class="banner">${esc(msg)}</p>` : ''}
      <form id="signin-form">
        <label>Token <input id="signin-token" type="password" autocomplete="current-password" required></label>
        <button class="primary" type="submit">Sign in</button>
      </form>
    </div>`;
  $('#signin-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      S.session = await call('POST', '/ui/session', { token: $('#signin-token').value });
      await start();
    } catch (e) {
      toast(String(e.message || e), true);
    }
  });
}

async function start() {
  $('#nav').hidden = false;
  $('#signout').hidden = !S.session.auth_required;
  $('#who').textContent = S.session.auth_required ? 'tenant ' + S.session.tenant : '';
  const [kinds] = await Promise.all([api('GET', '/kinds'), loadSnapshot(), loadClock()]);
  S.kinds = kinds.items;
  S.kindByName = new Map(S.kinds.map((k) => [k.name, k]));
  openStream();
  route();
}

// ---- views --------------------------------------------------------------------------------

function setView(v) {
  if (S.view && S.view.dispose) S.view.dispose();
  S.view = v;
}

function route() {
  if (!S.session) return;
  const h = location.hash || '#/';
  let m;
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.remove('active');
  if ((m = h.match(/^#\/object\/(.+)$/))) return objectView(decodeURIComponent(m[1]));
  if (h === '#/faults') return faultsView();
  if (h === '#/requests') return requestsView();
  if (h === '#/sim') return simView();
  return objectsView();
}
window.addEventListener('hashchange', route);

function navActive(name) {
  const a = document.querySelector(`[data-nav="${name}"]`);
  if (a) a.classList.add('active');
}

// Objects: a summary per kind and state, filters, and a windowed list.
function objectsView() {
  navActive('objects');
  const t0 = performance.now();
  const view = $('#view');
  view.innerHTML = `
    <section id="summary"></section>
    <div class="filters">
      <select id="f-kind" aria-label="kind"><option value="">every kind</option>${S.kinds.map((k) => `<option>${esc(k.name)}</option>`).join('')}</select>
      <select id="f-state" aria-label="state"></select>
      <input id="f-name" type="search" placeholder="filter by name or ID" aria-label="name">
      <span class="count" id="count"></span>
    </div>
    <div class="list" id="list">
      <div class="list-head"><span>Name</span><span>Kind</span><span>State</span><span>Status</span><span>Parent</span><span>Updated</span></div>
      <div id="rows" style="position:relative"></div>
    </div>`;
  const fk = $('#f-kind'), fs = $('#f-state'), fn = $('#f-name'), list = $('#list'), rows = $('#rows');
  fk.value = S.filter.kind;
  fn.value = S.filter.name;
  let shown = [];
  let dirtyList = true, dirtySummary = true, frame = 0;

  function fillStates() {
    const k = S.kindByName.get(S.filter.kind);
    let states;
    if (k) states = [...k.states.static, ...(k.states.transition || [])];
    else states = [...new Set([...S.objects.values()].map((o) => o.state))].sort();
    if (S.filter.state && !states.includes(S.filter.state)) states.push(S.filter.state);
    fs.innerHTML = '<option value="">every state</option>' + states.map((s) => `<option>${esc(s)}</option>`).join('');
    fs.value = S.filter.state;
  }

  function compute() {
    const f = S.filter, q = f.name.trim().toLowerCase();
    shown = [];
    for (const o of S.objects.values()) {
      if (f.kind && o.kind !== f.kind) continue;
      if (f.state && o.state !== f.state) continue;
      if (q && !o.name.toLowerCase().includes(q) && !o.id.toLowerCase().includes(q)) continue;
      shown.push(o);
    }
    // Newest first, so what an apply makes shows at the top.
    shown.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? -1 : 1));
    rows.style.height = shown.length * ROW + 'px';
    $('#count').textContent = `${shown.length} of ${S.objects.size} objects`;
  }

  function summary() {
    const by = new Map();
    for (const o of S.objects.values()) {
      let m = by.get(o.kind);
      if (!m) by.set(o.kind, (m = new Map()));
      m.set(o.state, (m.get(o.state) || 0) + 1);
    }
    const cards = [];
    for (const k of S.kinds) {
      const m = by.get(k.name);
      if (!m) continue;
      let total = 0;
      const chips = [...m.entries()].sort().map(([st, n]) => {
        total += n;
        return `<span class="chip" data-kind="${esc(k.name)}" data-state="${esc(st)}">${esc(st)} <b>${n}</b></span>`;
      });
      cards.push(`<div class="card kind-card" data-kind="${esc(k.name)}"><h3><a href="#/" data-kind="${esc(k.name)}">${esc(k.name)}</a> <span class="fam">${esc(k.family)} · ${total}</span></h3><div class="chips">${chips.join('')}</div></div>`);
    }
    $('#summary').innerHTML = cards.length ? cards.join('') : '<p class="muted">No objects yet: create some through the API (or terraform apply) and they appear here.</p>';
  }

  function rowHTML(o, i) {
    const st = o.status && (o.status.text || o.status.message) ? o.status.text || o.status.message : o.operation ? `${o.operation.action}…` : '';
    const parent = o.parent_id ? S.objects.get(o.parent_id) : null;
    return `<div class="row" style="top:${i * ROW}px" data-id="${esc(o.id)}">` +
      `<span title="${esc(o.id)}">${esc(o.name || o.id)}</span><span>${esc(o.kind)}</span><span>${badge(o)}</span>` +
      `<span title="${esc(st)}">${esc(st)}</span><span class="id">${esc(parent ? parent.name : o.parent_id || '')}</span>` +
      `<span class="id">${esc(fmtTime(o.updated_at).slice(11))}</span></div>`;
  }

  function paint() {
    frame = 0;
    if (dirtySummary) { summary(); dirtySummary = false; }
    if (dirtyList) { compute(); dirtyList = false; }
    const top = Math.max(0, list.scrollTop - ROW), h = list.clientHeight;
    const first = Math.floor(top / ROW), last = Math.min(shown.length, Math.ceil((top + h + 2 * ROW) / ROW));
    let html = '';
    for (let i = first; i < last; i++) html += rowHTML(shown[i], i);
    rows.innerHTML = html;
  }
  function schedule() { if (!frame) frame = requestAnimationFrame(paint); }

  fk.addEventListener('change', () => { S.filter.kind = fk.value; S.filter.state = ''; fillStates(); dirtyList = true; schedule(); });
  fs.addEventListener('change', () => { S.filter.state = fs.value; dirtyList = true; schedule(); });
  fn.addEventListener('input', () => { S.filter.name = fn.value; dirtyList = true; schedule(); });
  list.addEventListener('scroll', schedule, { passive: true });
  window.addEventListener('resize', schedule);
  rows.addEventListener('click', (ev) => {
    const r = ev.target.closest('.row');
    if (r) location.hash = '#/object/' + encodeURIComponent(r.dataset.id);
  });
  $('#summary').addEventListener('click', (ev) => {
    const c = ev.target.closest('[data-kind]');
    if (!c) return;
    ev.preventDefault();
    S.filter.kind = c.dataset.kind;
    S.filter.state = c.dataset.state || '';
    fk.value = S.filter.kind;
    fillStates();
    dirtyList = true;
    schedule();
  });

  fillStates();
  paint();
  // Rendered once the browser has painted the rows: what the 10,000-object figure measures.
  requestAnimationFrame(() => {
    window.dash.metrics.listRenderMs = performance.now() - t0;
    window.dash.metrics.listRenderedAt = performance.now();
  });
  setView({
    name: 'objects',
    update() {
      dirtyList = dirtySummary = true;
      if (!S.filter.kind) fillStates();
      schedule();
    },
    dispose() { window.removeEventListener('resize', schedule); if (frame) cancelAnimationFrame(frame); },
  });
}

// An object: its state diagram with the current state highlighted, timeline, relations.
function objectView(id) {
  navActive('objects');
  const view = $('#view');
  let o = S.objects.get(id);
  let last = o;
  const kindName = o ? o.kind : id.replace(/-[0-9a-f]+$/, '');
  const k = S.kindByName.get(kindName);
  // The list holds a few fields of each object ("partial"): read the whole object.
  if (k && o && o.partial) {
    api('GET', `/${k.collection}/${encodeURIComponent(id)}`).then((full) => {
      const cur = S.objects.get(id);
      if (cur && cur.version <= full.version) S.objects.set(id, full);
      if (!disposed) head();
    }).catch(() => {});
  }
  view.innerHTML = `
    <p><a href="#/">← objects</a></p>
    <div id="obj-head"></div>
    <div class="grid2">
      <section>
        <h2>State diagram</h2>
        <div class="card diagram" id="diagram"><p class="muted">Rendering…</p></div>
        <h2>Timeline</h2>
        <div id="timeline"><p class="muted">Loading…</p></div>
      </section>
      <section>
        <h2>Related objects</h2>
        <div class="card" id="related"></div>
        <h2>Actions</h2>
        <div class="card" id="actions"></div>
        <h2>Spec and status</h2>
        <div id="specstatus"></div>
      </section>
    </div>`;
  let disposed = false, evTimer = 0, diagramText = null, drawnState = null;

  function head() {
    const cur = S.objects.get(id);
    if (cur) o = last = cur;
    const gone = !cur;
    const x = last || { id, kind: kindName, name: id, state: '?' };
    const op = x.operation;
    $('#obj-head').innerHTML = `
      ${gone ? '<p class="banner" id="gone">This object is gone; its timeline is kept.</p>' : ''}
      <div class="obj-head"><h1>${esc(x.name || x.id)}</h1>${gone ? '<span class="state gone">gone</span>' : badge(x)}
        <span class="muted">${esc(x.kind)} · <span class="id">${esc(x.id)}</span> · version ${esc(x.version)}</span></div>
      <dl class="kv card">
        <dt>Operation</dt><dd id="op">${op ? `${esc(op.action)} in phase ${esc(op.phase)} since ${esc(fmtTime(op.phase_started_at || op.started_at))}${op.due_at ? ' · due ' + esc(fmtTime(op.due_at)) : ''}${op.error ? ` · <span class="err">${esc(op.error)}</span>` : ''}` : 'none (static)'}</dd>
        <dt>Created</dt><dd>${esc(fmtTime(x.created_at))}</dd>
        <dt>Updated</dt><dd>${esc(fmtTime(x.updated_at))}</dd>
      </dl>`;
    $('#specstatus').innerHTML = `<pre>${esc(JSON.stringify({ spec: x.spec || {}, status: x.status || {} }, null, 2))}</pre>`;
    related(x);
    actions(cur);
    drawDiagram(gone ? null : x.state);
  }

  function link(r) {
    return `<a href="#/object/${encodeURIComponent(r.id)}" data-rel-id="${esc(r.id)}">${esc(r.name || r.id)}</a> <span class="muted">${esc(r.kind)}</span> ${badge(r)}`;
  }

  function related(x) {
    const out = [];
    if (x.parent_id) {
      const p = S.objects.get(x.parent_id);
      out.push(`<h3>Parent</h3><ul><li data-rel="parent">${p ? link(p) : `<span class="id">${esc(x.parent_id)}</span> (gone)`}</li></ul>`);
    }
    const kids = [...S.objects.values()].filter((c) => c.parent_id === id).sort((a, b) => (a.name < b.name ? -1 : 1));
    if (kids.length) out.push(`<h3>Children (${kids.length})</h3><ul>${kids.map((c) => `<li data-rel="child">${link(c)}</li>`).join('')}</ul>`);
    const links = [];
    for (const [f, v] of Object.entries(x.spec || {})) {
      const r = typeof v === 'string' ? S.objects.get(v) : null;
      if (r && r.id !== x.parent_id) links.push(`<li data-rel="link">${esc(f)}: ${link(r)}</li>`);
    }
    if (links.length) out.push(`<h3>Linked</h3><ul>${links.join('')}</ul>`);
    $('#related').innerHTML = out.length ? out.join('') : '<p class="muted">No parent, children or links.</p>';
  }

  function actions(cur) {
    const el = $('#actions');
    if (!cur || !k) { el.innerHTML = '<p class="muted">None.</p>'; return; }
    if (cur.operation) { el.innerHTML = `<p class="muted">Busy: ${esc(cur.operation.action)} is running.</p>`; return; }
    const acts = (k.actions || []).filter((a) => (!a.actor || a.actor === 'user') && (a.from_any || (a.from || []).includes(cur.state)));
    el.innerHTML = acts.length
      ? acts.map((a) => `<button type="button" data-action="${esc(a.name)}" title="${esc(a.description || '')}">${esc(a.name)}</button>`).join(' ')
      : '<p class="muted">No user action from this state.</p>';
  }
  $('#actions').addEventListener('click', async (ev) => {
    const b = ev.target.closest('[data-action]');
    if (!b) return;
    b.disabled = true;
    try {
      await api('POST', `/${k.collection}/${encodeURIComponent(id)}/actions/${encodeURIComponent(b.dataset.action)}`, {});
    } catch (e) {
      toast(String(e.message || e), true);
      b.disabled = false;
    }
  });

  async function drawDiagram(state) {
    const el = $('#diagram');
    if (!k) { el.innerHTML = '<p class="muted">Unknown kind.</p>'; return; }
    if (state === drawnState && el.querySelector('svg')) return;
    drawnState = state;
    try {
      if (diagramText === null) {
        const res = await fetch('/ui/diagram/' + encodeURIComponent(k.name), { credentials: 'same-origin' });
        if (!res.ok) throw new Error('diagram: HTTP ' + res.status);
        diagramText = await res.text();
      }
      const mermaid = await loadMermaid();
      const mid = state ? state.replace(/[ -]/g, '_') : '';
      let text = diagramText;
      if (mid) text += `\n    classDef current fill:#1565c0,color:#fff,stroke:#0d47a1,stroke-width:3px\n    class ${mid} current\n`;
      const { svg } = await mermaid.render('mmd-' + Math.random().toString(36).slice(2), text);
      if (disposed || drawnState !== state) return;
      el.innerHTML = svg;
      el.dataset.current = state || '';
      if (mid) {
        // Mermaid names a state's node <svg id>-state-<state>-<n>.
        const re = new RegExp('(^|-)state-' + mid.replace(/[^\w]/g, '\\$&') + '-\\d+$');
        for (const g of el.querySelectorAll('g.node')) if (re.test(g.id)) g.classList.add('dash-current');
      }
    } catch (e) {
      el.innerHTML = `<p class="muted">Could not draw the diagram: ${esc(e.message || e)}</p>`;
    }
  }

  async function timeline() {
    if (!k) return;
    let evs;
    try {
      evs = (await api('GET', `/${k.collection}/${encodeURIComponent(id)}/events`)).items;
    } catch (e) {
      $('#timeline').innerHTML = `<p class="muted">${esc(e.message || e)}</p>`;
      return;
    }
    if (disposed) return;
    const rows = evs.map((e, i) => {
      const next = evs[i + 1];
      const lasted = next ? new Date(next.time) - new Date(e.time) : null;
      const msg = [e.error, e.message].filter(Boolean).join(' — ');
      return `<tr data-seq="${e.seq}"><td class="id">${esc(fmtTime(e.time))}</td><td>${esc(e.actor)}</td><td>${esc(e.action || '')}</td>` +
        `<td>${esc(e.from || '·')} → <b>${esc(e.to)}</b></td><td>${lasted === null ? (S.objects.has(id) ? '<span class="muted">now</span>' : '') : esc(fmtDur(lasted))}</td>` +
        `<td class="${e.error ? 'err' : ''}">${esc(msg)}</td></tr>`;
    });
    $('#timeline').innerHTML = `<table id="timeline-table"><thead><tr><th>Time</th><th>Actor</th><th>Action</th><th>Transition</th><th>Lasted</th><th>Error / message</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  }

  head();
  timeline();
  setView({
    name: 'object',
    update(ids) {
      if (ids && !ids.some((x) => x === id || (S.objects.get(x) || {}).parent_id === id || x === (last || {}).parent_id)) return;
      head();
      clearTimeout(evTimer);
      evTimer = setTimeout(timeline, 50);
    },
    dispose() { disposed = true; clearTimeout(evTimer); },
  });
}

let mermaidPromise = null;
function loadMermaid() {
  if (!mermaidPromise) {
    mermaidPromise = new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = '/ui/assets/mermaid.min.js';
      s.onload = () => {
        window.mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: 'neutral' });
        resolve(window.mermaid);
      };
      s.onerror = () => reject(new Error('could not load the Mermaid bundle'));
      document.head.append(s);
    });
  }
  return mermaidPromise;
}

// Faults: the rules with how often each fired, a form to add one, and remove buttons.
function faultsView() {
  navActive('faults');
  $('#view').innerHTML = `
    <h1>Fault rules</h1>
    <div id="faults"><p class="muted">Loading…</p></div>
    <h2>Add a fault</h2>
    <form id="fault-form" class="card stack">
      <label>Kind <select name="kind"><option value="">any kind</option>${S.kinds.map((k) => `<option>${esc(k.name)}</option>`).join('')}</select></label>
      <label>Action <input name="action" list="fault-actions" placeholder="any action"></label>
      <datalist id="fault-actions"></datalist>
      <label>Phase <input name="phase" placeholder="any phase"></label>
      <label>Mode <select name="mode"><option>fail</option><option>hang</option><option>slow</option><option>http_error</option><option>drop</option></select></label>
      <label>Message <input name="message" placeholder="fail: the error"></label>
      <label>Fatal <select name="fatal"><option value="">no (roll back)</option><option value="1">yes (error state)</option></select></label>
      <label>Slow factor <input name="factor" type="number" step="any" min="0"></label>
      <label>HTTP status <input name="http_status" type="number" min="400" max="599"></label>
      <label>Error code <input name="code" placeholder="unavailable"></label>
      <label>Probability <input name="probability" type="number" step="any" min="0" max="1" placeholder="1"></label>
      <label>Count <input name="count" type="number" min="0" placeholder="0 = unlimited"></label>
      <button class="primary" type="submit" id="fault-add">Add fault</button>
    </form>`;
  const form = $('#fault-form');
  let timer = 0, disposed = false;
  form.kind.addEventListener('change', () => {
    const k = S.kindByName.get(form.kind.value);
    const names = k ? [k.create.name, ...(k.actions || []).map((a) => a.name)] : [];
    $('#fault-actions').innerHTML = names.map((n) => `<option value="${esc(n)}">`).join('');
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = Object.fromEntries(new FormData(form).entries());
    const rule = { mode: f.mode };
    for (const key of ['kind', 'action', 'phase', 'message', 'code']) if (f[key]) rule[key] = f[key];
    for (const key of ['factor', 'probability']) if (f[key]) rule[key] = parseFloat(f[key]);
    for (const key of ['http_status', 'count']) if (f[key]) rule[key] = parseInt(f[key], 10);
    if (f.fatal) rule.fatal = true;
    try {
      const r = await api('POST', '/sim/faults', rule);
      toast('Fault ' + r.id + ' added');
      load();
    } catch (e) {
      toast(String(e.message || e), true);
    }
  });
  $('#faults').addEventListener('click', async (ev) => {
    const b = ev.target.closest('[data-remove]');
    if (!b) return;
    try {
      await api('DELETE', '/sim/faults/' + encodeURIComponent(b.dataset.remove));
      load();
    } catch (e) {
      toast(String(e.message || e), true);
    }
  });
  async function load() {
    let items;
    try { items = (await api('GET', '/sim/faults')).items; } catch (e) { return; }
    if (disposed) return;
    const detail = (r) => [
      r.message && 'message ' + r.message, r.fatal && 'fatal', r.factor && '×' + r.factor,
      r.http_status && 'HTTP ' + r.http_status + (r.code ? ' ' + r.code : ''),
      r.probability && 'p=' + r.probability, r.count && 'count ' + r.count,
    ].filter(Boolean).join(', ');
    $('#faults').innerHTML = items.length
      ? `<table id="faults-table"><thead><tr><th>ID</th><th>Kind</th><th>Action</th><th>Phase</th><th>Mode</th><th>Details</th><th>Fired</th><th></th></tr></thead><tbody>${items.map((r) =>
        `<tr data-fault="${esc(r.id)}"><td class="id">${esc(r.id)}</td><td>${esc(r.kind || 'any')}</td><td>${esc(r.action || 'any')}</td><td>${esc(r.phase || 'any')}</td><td>${esc(r.mode)}</td><td>${esc(detail(r))}</td><td class="fired">${r.fired}</td><td><button type="button" data-remove="${esc(r.id)}">Remove</button></td></tr>`).join('')}</tbody></table>`
      : '<p class="muted" id="no-faults">No fault rules: every transition succeeds.</p>';
  }
  load();
  setView({
    name: 'faults',
    // A fault fires inside a transition: reload the counts when objects change.
    update() { clearTimeout(timer); timer = setTimeout(load, 100); },
    dispose() { disposed = true; clearTimeout(timer); },
  });
}

// Requests: the tenant's request journal (GET /v1/sim/journal), newest first, filtered by
// method, path prefix and status; reloaded when objects change and by its button.
function requestsView() {
  navActive('requests');
  $('#view').innerHTML = `
    <h1>Requests</h1>
    <form id="journal-form" class="card filters">
      <label>Method <select name="method"><option value="">any</option><option>GET</option><option>POST</option><option>PATCH</option><option>PUT</option><option>DELETE</option></select></label>
      <label>Path starts with <input name="path" placeholder="/v1/machines"></label>
      <label>Status <input name="status" placeholder="404 or 4xx" size="8"></label>
      <button class="primary" type="submit" id="journal-refresh">Refresh</button>
    </form>
    <p id="journal-note" class="muted"></p>
    <div id="journal"><p class="muted">Loading…</p></div>`;
  const form = $('#journal-form');
  let timer = 0, disposed = false;
  form.addEventListener('submit', (ev) => { ev.preventDefault(); load(); });
  async function load() {
    const f = Object.fromEntries(new FormData(form).entries());
    const q = new URLSearchParams({ limit: '200' });
    for (const key of ['method', 'path', 'status']) if (f[key]) q.set(key, f[key]);
    let list;
    try { list = await api('GET', '/sim/journal?' + q); } catch (e) {
      if (!disposed) $('#journal').innerHTML = `<p class="bad" id="journal-error">${esc(e.message || e)}</p>`;
      return;
    }
    if (disposed) return;
    $('#journal-note').textContent = `The newest ${list.items.length} matching of the ${list.size} requests the journal keeps` +
      (list.dropped ? ` (${list.dropped} older ones let go)` : '') + '.';
    const body = (e) => (e.request_body || e.response_body)
      ? `<details><summary>bodies${e.bodies_cut ? ' (cut)' : ''}</summary><pre>${esc(e.request_body)}</pre><pre>${esc(e.response_body)}</pre></details>` : '';
    $('#journal').innerHTML = list.items.length
      ? `<table id="journal-table"><thead><tr><th>#</th><th>Time</th><th>Request</th><th>Status</th><th>Took</th><th>Error</th><th>Request ID</th><th>Idempotency key</th></tr></thead><tbody>${list.items.reverse().map((e) =>
        `<tr data-seq="${e.seq}"><td>${e.seq}</td><td>${esc(fmtTime(e.time))}</td><td class="req">${esc(e.method)} ${esc(e.path)}${e.query ? '?' + esc(e.query) : ''}${body(e)}</td><td class="status">${e.status}</td><td>${esc(e.duration_ms < 1000 ? e.duration_ms.toFixed(1) + ' ms' : fmtDur(Math.round(e.duration_ms)))}</td><td class="err">${esc(e.error_code ? e.error_code + ': ' + e.error_message : '')}</td><td class="id">${esc(e.request_id)}</td><td class="id">${esc(e.idempotency_key || '')}</td></tr>`).join('')}</tbody></table>`
      : '<p class="muted" id="no-requests">No requests recorded that match.</p>';
  }
  load();
  setView({
    name: 'requests',
    update() { clearTimeout(timer); timer = setTimeout(load, 200); },
    dispose() { disposed = true; clearTimeout(timer); },
  });
}

// The clock, time scale and heal limit, clock advance, and reset with confirmation.
function simView() {
  navActive('sim');
  $('#view').innerHTML = `
    <h1>Clock, time scale and reset</h1>
    <div class="card"><dl class="kv">
      <dt>Simulator clock</dt><dd id="sim-now"></dd>
      <dt>Time scale</dt><dd id="sim-scale"></dd>
      <dt>Heal stuck phases after</dt><dd id="sim-heal"></dd>
    </dl></div>
    <h2>Advance the clock</h2>
    <form id="advance-form" class="card stack">
      <label>By (a duration such as 90m or 24h) <input name="advance" required placeholder="1h"></label>
      <button class="primary" type="submit">Advance</button>
    </form>
    <h2>Time scale</h2>
    <form id="config-form" class="card stack">
      <label>Time scale (0.01 = 100× faster) <input name="time_scale" type="number" step="any" min="0" required></label>
      <label>Heal after <input name="heal_after" required></label>
      <button class="primary" type="submit">Save</button>
    </form>
    <h2>Reset</h2>
    <div class="card"><p>Remove every object and fault rule${S.session.auth_required ? ' of tenant <b>' + esc(S.session.tenant) + '</b>' : ''}. Event histories are kept.</p>
    <button type="button" class="danger" id="reset">Reset…</button></div>`;
  const cf = $('#config-form');
  async function load() {
    const [cfg] = await Promise.all([api('GET', '/sim/config'), loadClock()]);
    $('#sim-scale').textContent = cfg.time_scale;
    $('#sim-heal').textContent = cfg.heal_after;
    cf.time_scale.value = cfg.time_scale;
    cf.heal_after.value = cfg.heal_after;
    show();
  }
  function show() { $('#sim-now').textContent = fmtTime(simNow()); }
  const t = setInterval(show, 1000);
  $('#advance-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      await api('POST', '/sim/clock', { advance: ev.target.advance.value });
      toast('Clock advanced by ' + ev.target.advance.value);
      await load();
    } catch (e) { toast(String(e.message || e), true); }
  });
  cf.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      await api('PUT', '/sim/config', { time_scale: parseFloat(cf.time_scale.value), heal_after: cf.heal_after.value });
      toast('Saved');
      await load();
    } catch (e) { toast(String(e.message || e), true); }
  });
  $('#reset').addEventListener('click', () => {
    const d = $('#confirm-reset');
    d.returnValue = '';
    d.showModal();
  });
  load().catch((e) => toast(String(e.message || e), true));
  setView({ name: 'sim', dispose() { clearInterval(t); } });
}

$('#confirm-reset').addEventListener('close', async () => {
  if ($('#confirm-reset').returnValue !== 'reset') return;
  try {
    await api('POST', '/sim/reset');
    toast('Reset done');
  } catch (e) { toast(String(e.message || e), true); }
});

$('#signout').addEventListener('click', async () => {
  try { await call('DELETE', '/ui/session'); } catch (e) { /* signed out anyway */ }
  showSignIn('');
});

setInterval(() => { if (S.session) tickClock(); }, 1000);

(async function boot() {
  try {
    const s = await call('GET', '/ui/session');
    if (!s.signed_in) return showSignIn('');
    S.session = s;
    await start();
  } catch (e) {
    $('#view').innerHTML = `<p class="banner">${esc(e.message || e)}</p>`;
  }
})();
