/* sandlens web UI: the containers table, a container's page, a profile's
 * page (docs/UI.md). */
'use strict';
SL.pages = {};

/* ---- #/ : every container the agent knows, refreshed every 2 s ---- */
SL.pages.containers = (view) => {
  const thead = SL.el('thead'), tbody = SL.el('tbody');
  const table = SL.el('table', { id: 'containers' }, thead, tbody);
  const note = SL.el('p', { class: 'muted' }, '');
  view.append(SL.el('h1', {}, 'Containers'), note, table);
  SL.every(5000, async () => {
    const [ev, wl, latest] = await Promise.all([
      SL.api('/api/v1/containers'),
      SL.api('/api/v1/workloads').catch(() => ({ workloads: [] })),
      SL.latestSeries(),
    ]);
    const rows = new Map();
    const row = (id) => { if (!rows.has(id)) rows.set(id, { id }); return rows.get(id); };
    for (const c of ev.containers || []) Object.assign(row(c.container_id), { ev: c, pod: c.pod_uid, runtime: c.runtime });
    for (const w of wl.workloads || []) if (w.kind === 'container') {
      const r = row(w.id);
      r.pod = r.pod || w.pod_uid; r.runtime = r.runtime || w.runtime; r.state = w.state;
    }
    for (const [id, v] of latest.values) if (id) row(id).series = v;
    // one column per declared series (of every running module)
    SL.clear(thead).appendChild(SL.el('tr', {}, ['container', 'pod uid', 'runtime', 'events', 'by kind'].map((h) => SL.el('th', {}, h)),
      latest.decls.map((d) => SL.el('th', { class: 'num', title: d.module + ': ' + d.doc }, d.name.replace(/_/g, ' '))), SL.el('th', {}, 'last event')));
    SL.clear(tbody);
    for (const r of [...rows.values()].sort((a, b) => a.id.localeCompare(b.id))) {
      const bt = r.ev ? Object.entries(r.ev.by_type || {}).map(([k, n]) => k + ' ' + n).join(', ') : '';
      tbody.appendChild(SL.el('tr', { 'data-id': r.id },
        SL.el('td', { class: 'mono nowrap' }, SL.link(SL.containerRoute(r.id), r.id)),
        SL.el('td', { class: 'mono nowrap' }, r.pod || ''),
        SL.el('td', {}, r.runtime || ''),
        SL.el('td', { class: 'num' }, r.ev ? r.ev.events : 0),
        SL.el('td', {}, bt),
        latest.decls.map((d) => {
          const v = r.series && r.series.get(d.module + '/' + d.name);
          return SL.el('td', { class: 'num' }, v !== undefined ? SL.fmt.unit(v, d.unit) : '-');
        }),
        SL.el('td', {}, r.ev ? SL.fmt.ago(r.ev.last_seen) : '-')));
    }
    note.textContent = rows.size + ' containers (events in the store, cgroup statistics, series); refreshed ' + new Date().toISOString().slice(11, 19);
    if (ev.truncated) note.textContent += ' — list truncated by the agent';
  });
};

/* The latest value of every series of every running module: {decls (the
 * declared series), values: Map container_id -> Map "module/name" -> value}. */
SL.latestSeries = async () => {
  const values = new Map();
  const list = await SL.api('/api/v1/series').catch(() => ({ series: [] }));
  const decls = list.series || [];
  await Promise.all(decls.map(async (s) => {
    const j = await SL.api('/api/v1/series?module=' + encodeURIComponent(s.module) + '&name=' + encodeURIComponent(s.name)).catch(() => null);
    for (const p of (j && j.points) || []) {
      if (!values.has(p.container_id)) values.set(p.container_id, new Map());
      values.get(p.container_id).set(s.module + '/' + s.name, p.value);
    }
  }));
  return { decls, values };
};

/* A definition list of an object's scalar fields, formatted by suffix. */
SL.kv = (obj, skip = []) => {
  const dl = SL.el('dl', { class: 'kv' });
  for (const [k, v] of Object.entries(obj || {})) {
    if (skip.includes(k) || (v !== null && typeof v === 'object')) continue;
    let t = v;
    if (typeof v === 'number') {
      if (k.endsWith('_bytes')) t = SL.fmt.bytes(v);
      else if (k.endsWith('_usec')) t = SL.fmt.dur(v * 1e3);
      else if (k.endsWith('_seconds')) t = SL.fmt.secs(v);
      else if (k.endsWith('_ns')) t = SL.fmt.dur(v);
      else t = SL.fmt.num(v, 4);
    }
    dl.append(SL.el('dt', {}, k), SL.el('dd', { 'data-key': k }, t === null ? '-' : String(t)));
  }
  return dl;
};

/* ---- #/container/<id> ---- */
SL.pages.container = async (view, id) => {
  await SL.loadSchema();
  const health = await SL.loadHealth();
  const qid = encodeURIComponent(id);
  const head = SL.el('div', {});
  const stats = SL.el('div', { class: 'card', id: 'stats' }, SL.el('h3', {}, 'Statistics (cgroup)'));
  const plots = SL.el('div', { class: 'grid', id: 'plots' });
  const neigh = SL.el('div', { id: 'neighbours' });
  const tl = SL.el('div', { id: 'container-timeline' });
  const detail = SL.el('div', { id: 'event-detail' }, 'click an event mark for the whole event');
  const evtable = SL.el('div', { id: 'container-events' });
  const tasks = SL.el('div', { id: 'tasks' });
  const views = SL.el('div', { class: 'grid', id: 'module-views' });
  view.append(SL.el('h1', {}, 'Container ', SL.el('span', { class: 'mono', id: 'container-id' }, id)), head,
    stats, SL.el('h2', {}, 'Over time'), plots,
    SL.el('h2', {}, 'Neighbours (runqueue)'), neigh,
    SL.el('h2', {}, 'In the modules\' views'), views,
    SL.el('h2', {}, 'Events (at most the last 15 minutes)'), tl, detail, evtable,
    SL.el('h2', {}, 'Captures and profiles'), tasks);

  // statistics
  SL.every(3000, async () => {
    const j = await SL.api('/api/v1/workloads/' + qid + '/stats').catch((e) => ({ error: e }));
    SL.clear(stats).appendChild(SL.el('h3', {}, 'Statistics (cgroup)'));
    if (j.error) { stats.appendChild(SL.el('p', { class: 'muted' }, 'no statistics: ' + j.error.message)); return; }
    stats.appendChild(SL.kv(j, ['id']));
  });

  // every series of every running module, with the agent's history
  const list = await SL.api('/api/v1/series').catch(() => ({ series: [] }));
  const cards = (list.series || []).map((s) => {
    const c = SL.el('canvas', { class: 'plot', 'data-series': s.module + '/' + s.name, 'data-points': '0' });
    plots.appendChild(SL.el('div', { class: 'card' }, SL.el('h3', {}, s.module + ' · ' + s.name + ' (' + s.unit + ')'),
      SL.el('div', { class: 'muted' }, s.doc), c));
    return { s, c };
  });
  if (!cards.length) plots.appendChild(SL.el('p', { class: 'muted' }, 'no running module declares a series'));
  SL.every(2000, async () => {
    await Promise.all(cards.map(async ({ s, c }) => {
      const j = await SL.api('/api/v1/series/history?module=' + encodeURIComponent(s.module) + '&name=' +
        encodeURIComponent(s.name) + '&container=' + qid).catch(() => null);
      const lines = ((j && j.containers) || []).filter((x) => x.container_id === id)
        .map((x) => ({ label: x.container_id, points: x.points.map((p) => [SL.timeMs(p.time), p.value]) }));
      SL.plot(c, lines, s.unit);
    }));
  });

  // neighbours and the runqueue snapshot (a module view, when there is one)
  const hasView = (health.modules || []).some((m) => m.name === 'sched' && (m.state === 'running' || m.state === 'degraded'));
  if (hasView) {
    SL.every(2000, async () => {
      const j = await SL.api('/api/v1/sched');
      const me = (j.containers || []).find((c) => c.container_id === id);
      SL.clear(neigh);
      if (!me) { neigh.appendChild(SL.el('p', { class: 'muted' }, 'no runqueue waits of this container yet')); return; }
      const iv = me.interval || {};
      neigh.appendChild(SL.el('p', {}, 'last interval: ' + iv.waits + ' waits, p50 ' + SL.fmt.secs(iv.p50_seconds) + ', p99 ' +
        SL.fmt.secs(iv.p99_seconds) + ', max ' + SL.fmt.secs(iv.max_seconds) + ', waiting share ' + SL.fmt.pct(iv.runnable_wait_share)));
      neigh.appendChild(SL.el('table', { class: 'neighbours' },
        SL.el('thead', {}, SL.el('tr', {}, ['ran instead (on the CPU we waited for)', 'wait (total)', 'waits', 'wait (interval)', 'waits (interval)'].map((h) => SL.el('th', {}, h)))),
        SL.el('tbody', {}, (me.neighbours || []).map((n) => SL.el('tr', {},
          SL.el('td', { class: 'mono' }, n.host ? 'host' : SL.link(SL.containerRoute(n.container_id), n.container_id)),
          SL.el('td', { class: 'num' }, SL.fmt.secs(n.wait_seconds)), SL.el('td', { class: 'num' }, n.waits),
          SL.el('td', { class: 'num' }, SL.fmt.secs(n.interval_wait_seconds)), SL.el('td', { class: 'num' }, n.interval_waits))))));
    });
  } else {
    neigh.appendChild(SL.el('p', { class: 'muted' }, 'the runqueue module is not running'));
  }

  // this container's entry in every running module's view that lists
  // containers (GET /api/v1/<module>): modules added later show up here
  SL.every(10000, async () => {
    const found = await Promise.all(SL.runningModules(health).map(async (m) => {
      const j = await SL.moduleView(m.name);
      const e = j && Array.isArray(j.containers) && j.containers.find((c) => c && c.container_id === id);
      return e ? SL.el('div', { class: 'card', 'data-module': m.name }, SL.el('h3', {}, 'GET /api/v1/' + m.name), SL.kv(e, ['container_id']),
        SL.el('pre', { class: 'mono' }, JSON.stringify(Object.fromEntries(Object.entries(e).filter(([, v]) => v !== null && typeof v === 'object')), null, 1))) : null;
    }));
    SL.clear(views);
    SL.append(views, found);
    if (!found.some(Boolean)) views.appendChild(SL.el('p', { class: 'muted' }, 'no module view lists this container'));
  });

  // events: timeline and table
  const lanes = SL.lanes(SL.meta.schema, health);
  const feed = new SL.EventFeed('container=' + qid, '15m', 3000, (evs) => {
    // the window: the last 15 minutes, or from the first event (a young container)
    const now = Date.now(), first = evs.length ? SL.timeMs(evs[0].time) : now;
    const t0 = Math.max(now - 15 * 60e3, first - Math.max(5e3, (now - first) * 0.05));
    SL.timeline(tl, lanes, evs, t0, now, (e) => { detail.textContent = JSON.stringify(e, null, 2); });
    SL.clear(evtable).appendChild(SL.eventTable(evs, 50, false));
  });
  SL.every(2000, () => feed.poll());

  // profiles and captures (admins)
  SL.taskPanel(tasks, id);
};

/* Task records of one container, buttons that start a profile. */
SL.taskPanel = async (host, id) => {
  const caps = await SL.api('/api/v1/capabilities').catch(() => null);
  const bar = SL.el('div', { class: 'toolbar' });
  const list = SL.el('div', {});
  host.append(bar, list);
  const types = ((caps && caps.task_types) || []).filter((t) => t.type.startsWith('profile_') || t.type.startsWith('trace_'));
  const dur = SL.el('input', { type: 'number', min: 1, max: 60, value: 5, id: 'task-duration', class: 'narrow' });
  bar.append('duration (s): ', dur);
  for (const t of types) {
    bar.appendChild(SL.el('button', { type: 'button', 'data-task-type': t.type, disabled: t.supported ? null : 'disabled',
      title: t.supported ? t.details || '' : 'not supported: ' + (t.reason || ''),
      onclick: async () => {
        try {
          const rec = await SL.api('/api/v1/tasks', { method: 'POST', body: { type: t.type, target: { container: id }, duration_s: Number(dur.value) || 5 } });
          SL.status('started ' + t.type + ' ' + rec.id);
          refresh();
        } catch (e) { SL.status(t.type + ': ' + e.message); }
      } }, 'Start ' + t.type.replace(/_/g, ' ')));
  }
  const denied = () => SL.clear(list).appendChild(SL.el('p', { class: 'muted', id: 'tasks-denied' },
    'profiles and captures are for admins: enter the admin token above (stacks and command lines are admin-only)'));
  if (!SL.admin) { // a reader: the task routes would only answer 403 (and count it)
    for (const b of bar.querySelectorAll('button')) b.disabled = true;
    denied();
    return;
  }
  const refresh = async () => {
    let j;
    try { j = await SL.api('/api/v1/tasks'); } catch (e) {
      if (e.status === 403) { denied(); return; }
      SL.clear(list).appendChild(SL.el('p', { class: 'muted' }, 'tasks unavailable: ' + e.message));
      return;
    }
    const mine = (j.tasks || []).filter((t) => (t.resolved && t.resolved.container_id === id) ||
      (t.target && typeof t.target.container === 'string' && id.startsWith(t.target.container)));
    SL.clear(list).appendChild(SL.el('table', { id: 'task-list' },
      SL.el('thead', {}, SL.el('tr', {}, ['task', 'type', 'status', 'created', 'duration', 'result'].map((h) => SL.el('th', {}, h)))),
      SL.el('tbody', {}, mine.map((t) => SL.el('tr', { 'data-task': t.id, 'data-status': t.status },
        SL.el('td', { class: 'mono' }, t.status === 'done' ? SL.link('#/task/' + encodeURIComponent(t.id), t.id) : t.id),
        SL.el('td', {}, t.type), SL.el('td', { class: 'state-' + t.status }, t.status + (t.reason ? ': ' + t.reason : '')),
        SL.el('td', {}, SL.fmt.time(t.created_at)), SL.el('td', { class: 'num' }, t.duration_s + 's'),
        SL.el('td', {}, t.result ? (t.result.total_count !== undefined ? t.result.total_count + ' samples, ' + t.result.stacks + ' stacks'
          : t.result.total_errors !== undefined ? t.result.total_errors + ' errors' : '') : ''))))));
    if (!mine.length) list.appendChild(SL.el('p', { class: 'muted' }, 'no tasks for this container yet'));
  };
  SL.every(2000, refresh);
};

/* ---- #/task/<id>: a task's record and its flame graph ---- */
SL.pages.task = async (view, id) => {
  const qid = encodeURIComponent(id);
  const rec = await SL.api('/api/v1/tasks/' + qid);
  const c = rec.resolved && rec.resolved.container_id;
  view.append(SL.el('h1', {}, 'Task ', SL.el('span', { class: 'mono' }, id)),
    SL.el('p', {}, rec.type + ', ' + rec.status + (c ? ', container ' : ''), c ? SL.link(SL.containerRoute(c), c) : null,
      ', ' + rec.duration_s + ' s' + (rec.event ? ', event ' + rec.event : '') + (rec.agent_cpu_s !== undefined ? ', agent CPU ' + SL.fmt.secs(rec.agent_cpu_s) : '')));
  if (rec.status !== 'done') { view.appendChild(SL.el('p', { class: 'muted' }, 'no result: ' + (rec.reason || rec.status))); return; }
  if (!rec.type.startsWith('profile_')) {
    const j = await SL.api('/api/v1/tasks/' + qid + '/result?format=json');
    view.appendChild(SL.el('pre', { class: 'mono' }, JSON.stringify(j, null, 2)));
    return;
  }
  const prof = await SL.api('/api/v1/tasks/' + qid + '/result?format=json');
  // the other formats, fetched with the caller's token and saved from a blob: URL
  const dl = SL.el('div', { class: 'toolbar' }, 'download: ');
  for (const f of (rec.result && rec.result.formats) || []) {
    dl.appendChild(SL.el('button', { type: 'button', 'data-format': f, onclick: async () => {
      try {
        const t = SL.token();
        const r = await fetch('/api/v1/tasks/' + qid + '/result?format=' + encodeURIComponent(f),
          { headers: t ? { Authorization: 'Bearer ' + t } : {}, cache: 'no-store', credentials: 'omit' });
        if (!r.ok) throw new Error(f + ': HTTP ' + r.status);
        const url = URL.createObjectURL(await r.blob());
        const a = SL.el('a', { href: url, download: id + '.' + (f === 'pprof' ? 'pb.gz' : f === 'folded' ? 'folded' : f) });
        document.body.appendChild(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 10000);
      } catch (e) { SL.status(e.message); }
    } }, f));
  }
  view.appendChild(dl);
  const search = SL.el('input', { type: 'search', id: 'flame-search', placeholder: 'search frames (substring)' });
  const reset = SL.el('button', { type: 'button', id: 'flame-reset' }, 'Reset zoom');
  const host = SL.el('div', { id: 'flame' });
  view.append(SL.el('h2', {}, 'Flame graph (' + (prof.total !== undefined ? prof.total : '?') + ' ' + (prof.unit || '') + ')'),
    SL.el('div', { class: 'toolbar' }, search, reset, SL.el('span', { class: 'muted' }, 'click a frame to zoom; click it again to zoom out')), host);
  const fg = new SL.Flame(host, prof.tree || { name: 'all', value: 0, children: [] }, prof.unit);
  search.addEventListener('input', () => fg.search(search.value));
  reset.addEventListener('click', () => fg.reset());
  const top = prof.top || [];
  view.append(SL.el('h2', {}, 'Hottest functions (self)'), SL.el('table', { id: 'flame-top' },
    SL.el('thead', {}, SL.el('tr', {}, ['function', 'module', 'self', 'total'].map((h) => SL.el('th', {}, h)))),
    SL.el('tbody', {}, top.slice(0, 20).map((f) => SL.el('tr', {}, SL.el('td', { class: 'mono' }, f.function),
      SL.el('td', { class: 'mono' }, f.module || ''), SL.el('td', { class: 'num' }, f.self), SL.el('td', { class: 'num' }, f.total))))));
};
