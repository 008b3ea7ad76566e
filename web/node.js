/* sandlens web UI: the node page (modules, hooks, the agent's own state and
 * cost, from /healthz and /metrics) and the node timeline (every event of
 * every module, host and containers, in one window). */
'use strict';

/* Prometheus text -> [{name, labels: {}, value}] (samples only). */
SL.parseProm = (text) => {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
};

SL.pages.node = async (view) => {
  const head = SL.el('div', { id: 'node-health' });
  const mods = SL.el('div', { id: 'node-modules' });
  const cost = SL.el('div', { id: 'node-cost' });
  const views = SL.el('div', { id: 'node-views' });
  view.append(SL.el('h1', {}, 'Node'), head, SL.el('h2', {}, 'Modules and hooks'), mods,
    SL.el('h2', {}, 'The agent\'s own cost'), cost, SL.el('h2', {}, 'Module views'), views);

  SL.every(3000, async () => {
    const h = await SL.loadHealth();
    SL.clear(head).append(
      SL.el('p', {}, 'status ', SL.el('span', { class: 'state-' + h.status, id: 'node-status' }, h.status),
        ', up ' + SL.fmt.secs(h.uptime_seconds) + ', attribution ' + (h.attribution ? 'on' : 'off') +
        ', cgroup v2 ' + (h.cgroup_v2_mount || '-') + ', v1 ' + (h.cgroup_v1_mount || '-')),
      SL.el('div', { class: 'grid' },
        SL.el('div', { class: 'card' }, SL.el('h3', {}, 'store ', SL.el('span', { class: 'state-' + (h.store && h.store.state) }, h.store ? h.store.state : '-')), SL.kv(h.store || {})),
        SL.el('div', { class: 'card' }, SL.el('h3', {}, 'pressure (self-protection)'), SL.kv(h.pressure || {}),
          h.pressure && h.pressure.measurements ? SL.kv(h.pressure.measurements) : null),
        SL.el('div', { class: 'card' }, SL.el('h3', {}, 'export ', SL.el('span', { class: 'state-' + (h.export && h.export.state) }, h.export ? h.export.state : '-')), SL.kv(h.export || {}))));
    const rows = [];
    for (const m of h.modules || []) {
      const hooks = m.hooks || [];
      rows.push(SL.el('tr', { class: 'module', 'data-module': m.name },
        SL.el('td', { rowspan: Math.max(1, hooks.length) }, SL.el('strong', {}, m.name)),
        SL.el('td', { rowspan: Math.max(1, hooks.length), class: 'state-' + m.state, 'data-state': m.state }, m.state,
          m.error ? SL.el('div', { class: 'err' }, m.error) : null),
        ...(hooks.length ? hookCells(hooks[0], m.name) : [SL.el('td', { colspan: 3, class: 'muted' }, 'no hooks')])));
      for (const hk of hooks.slice(1)) rows.push(SL.el('tr', { 'data-module': m.name }, ...hookCells(hk, m.name)));
    }
    SL.clear(mods).appendChild(SL.el('table', { id: 'modules' },
      SL.el('thead', {}, SL.el('tr', {}, ['module', 'state', 'hook', 'hook state', 'reason'].map((x) => SL.el('th', {}, x)))),
      SL.el('tbody', {}, rows)));
  });
  function hookCells(hk, mod) {
    return [SL.el('td', { class: 'mono hook', 'data-hook': hk.name, 'data-module': mod }, hk.name),
      SL.el('td', { class: 'state-' + hk.state, 'data-state': hk.state }, hk.state),
      SL.el('td', { class: 'muted' }, hk.reason || '')];
  }

  // the agent's cost from its own /metrics (rates between two scrapes)
  let prev = null;
  SL.every(5000, async () => {
    const text = await SL.api('/metrics', { text: true });
    const s = SL.parseProm(text);
    const now = Date.now();
    const sum = (name, f = () => true) => s.filter((x) => x.name === name && f(x.labels)).reduce((a, x) => a + x.value, 0);
    const cur = { t: now, cpu: sum('process_cpu_seconds_total'), api: sum('sandlens_api_cpu_seconds_total'), bpf: new Map(), bpfn: new Map() };
    for (const x of s) {
      if (x.name === 'sandlens_bpf_prog_run_time_seconds_total') cur.bpf.set(x.labels.module, (cur.bpf.get(x.labels.module) || 0) + x.value);
      if (x.name === 'sandlens_bpf_prog_run_count_total') cur.bpfn.set(x.labels.module, (cur.bpfn.get(x.labels.module) || 0) + x.value);
    }
    const rate = (a, b) => prev ? (a - b) / ((now - prev.t) / 1000) : null;
    const dropped = s.filter((x) => x.name === 'sandlens_events_dropped_total' && x.value > 0);
    const tr = (k, v, id) => SL.el('tr', {}, SL.el('td', {}, k), SL.el('td', { class: 'num', 'data-cost': id }, v));
    const rows = [
      tr('agent CPU (user+system, all threads)', SL.fmt.secs(cur.cpu) + (prev ? ' — ' + SL.fmt.pct(rate(cur.cpu, prev.cpu)) + ' of a CPU now' : ''), 'cpu'),
      tr('API threads CPU', SL.fmt.secs(cur.api), 'api'),
      tr('resident memory', SL.fmt.bytes(sum('process_resident_memory_bytes')), 'rss'),
      tr('store', SL.fmt.bytes(sum('sandlens_store_bytes')) + ', WAL ' + SL.fmt.bytes(sum('sandlens_store_wal_bytes')) + ', ' + sum('sandlens_store_rows_written_total') + ' rows written', 'store'),
      tr('events dropped', dropped.length ? dropped.map((x) => x.labels.type + '/' + x.labels.reason + ' ' + x.value).join(', ') : 'none', 'dropped'),
    ];
    for (const [m, t] of [...cur.bpf].filter(([m]) => cur.bpfn.get(m) > 0)) {
      const n = cur.bpfn.get(m) || 0;
      rows.push(tr('BPF programs of ' + m, SL.fmt.secs(t) + ' in ' + n + ' runs' + (n ? ' (' + SL.fmt.dur(t * 1e9 / n) + ' each)' : '') +
        (prev && prev.bpf.has(m) ? ' — ' + SL.fmt.pct(rate(t, prev.bpf.get(m))) + ' of a CPU now' : ''), 'bpf-' + m));
    }
    if (![...cur.bpfn.values()].some((n) => n > 0))
      rows.push(tr('BPF programs', 'run time not measured: sysctl kernel.bpf_stats_enabled=1 turns it on', 'bpf'));
    prev = cur;
    SL.clear(cost).appendChild(SL.el('table', { id: 'cost' }, SL.el('tbody', {}, rows)));
  });

  // each running module's main view, if it has one
  const h = await SL.loadHealth();
  for (const m of SL.runningModules(h)) {
    const j = await SL.moduleView(m.name);
    if (!j) continue;
    const pre = SL.el('pre', { class: 'mono' }, JSON.stringify(j, null, 1).slice(0, 20000));
    views.appendChild(SL.el('details', { 'data-module': m.name }, SL.el('summary', {}, 'GET /api/v1/' + m.name), pre));
  }
};

/* ---- #/timeline: the node's events, every module, in one window ---- */
SL.pages.timeline = async (view) => {
  await SL.loadSchema();
  const health = await SL.loadHealth();
  const win = SL.el('select', { id: 'tl-window' }, ['1m', '5m', '15m', '1h'].map((w) => SL.el('option', { value: w, selected: w === '5m' ? 'selected' : null }, w)));
  const scope = SL.el('select', { id: 'tl-scope' }, SL.el('option', { value: '' }, 'host and every container'));
  const host = SL.el('div', { id: 'node-timeline' });
  const detail = SL.el('div', { id: 'event-detail' }, 'click an event mark for the whole event');
  const table = SL.el('div', {});
  const legend = SL.el('p', { class: 'muted' }, 'one lane per event kind, grouped by module (hardware: RAS, PCIe and GPU kinds, next to scheduling, memory, I/O and network); colour = severity');
  view.append(SL.el('h1', {}, 'Node timeline'), legend, SL.el('div', { class: 'toolbar' }, 'window ', win, ' scope ', scope), host, detail, table);
  const lanes = SL.lanes(SL.meta.schema, health);
  const ms = { '1m': 60e3, '5m': 300e3, '15m': 900e3, '1h': 3600e3 };
  let feed;
  const draw = (evs) => {
    const now = Date.now(), w = ms[win.value];
    const inWin = evs.filter((e) => SL.timeMs(e.time) >= now - w);
    SL.timeline(host, lanes, inWin, now - w, now, (e) => { detail.textContent = JSON.stringify(e, null, 2); });
    SL.clear(table).appendChild(SL.eventTable(inWin, 60, true));
  };
  const start = () => { feed = new SL.EventFeed(scope.value ? 'container=' + encodeURIComponent(scope.value) : '', win.value, 5000, draw); };
  start();
  win.addEventListener('change', start);
  scope.addEventListener('change', start);
  SL.every(2000, () => feed.poll());
  SL.every(10000, async () => {
    const j = await SL.api('/api/v1/containers');
    const have = new Set([...scope.options].map((o) => o.value));
    for (const c of j.containers || []) if (!have.has(c.container_id)) scope.appendChild(SL.el('option', { value: c.container_id }, c.container_id));
  });
};
