/* sandlens web UI: shared helpers (docs/UI.md).
 * Every value from the API reaches the page as text (textContent, attribute
 * values through setAttribute, canvas fillText): never as HTML. */
'use strict';
const SL = {};

SL.TOKEN_KEY = 'sandlens.token';
/* Whether the agent takes the token as an admin's (app.js role()). */
SL.admin = false;
/* The admin token the user typed in, kept in this tab's sessionStorage only. */
SL.token = () => { try { return sessionStorage.getItem(SL.TOKEN_KEY) || ''; } catch (e) { return ''; } };
SL.setToken = (t) => {
  try { if (t) sessionStorage.setItem(SL.TOKEN_KEY, t); else sessionStorage.removeItem(SL.TOKEN_KEY); } catch (e) { /* private mode */ }
};

/* An API error: HTTP status, the error code and message of the JSON body. */
class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}
SL.ApiError = ApiError;

/* GET (or another method) path on the agent; JSON answer, or text when
 * opts.text. The token goes in an Authorization header, only when set. */
SL.api = async (path, opts = {}) => {
  const headers = {};
  const t = SL.token();
  if (t) headers.Authorization = 'Bearer ' + t;
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method: opts.method || 'GET', headers, cache: 'no-store', credentials: 'omit',
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const body = await r.text();
  if (!r.ok && !(opts.accept && opts.accept.includes(r.status))) {
    let code = 'HTTP_' + r.status, msg = body.slice(0, 300);
    try { const j = JSON.parse(body); if (j && j.error) { code = j.error.code; msg = j.error.message; } } catch (e) { /* not JSON */ }
    throw new ApiError(r.status, code, msg);
  }
  if (opts.text) return body;
  try { return JSON.parse(body); } catch (e) { throw new ApiError(r.status, 'BAD_JSON', 'answer is not JSON: ' + e.message); }
};

/* Build an element: attrs (class, data-*, other attributes, on* handlers as
 * functions), children (strings become text nodes; null/false skipped). */
SL.el = (tag, attrs, ...children) => {
  const e = document.createElement(tag);
  SL.setAttrs(e, attrs);
  SL.append(e, children);
  return e;
};
SL.svg = (tag, attrs, ...children) => {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  SL.setAttrs(e, attrs);
  SL.append(e, children);
  return e;
};
SL.setAttrs = (e, attrs) => {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (k === 'href' && !(String(v).startsWith('#/') || String(v).startsWith('blob:'))) throw new Error('href must be an internal link');
    else e.setAttribute(k, String(v));
  }
};
SL.append = (e, children) => {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
};
SL.clear = (e) => { while (e.firstChild) e.removeChild(e.firstChild); return e; };
SL.link = (route, text, attrs = {}) => SL.el('a', Object.assign({ href: route }, attrs), text);
/* #/container/<id> (the id percent-encoded: it is only ever a fragment). */
SL.containerRoute = (id) => '#/container/' + encodeURIComponent(id);
SL.shortId = (id) => (id && id.length > 16 ? id.slice(0, 12) + '…' : id || '');

SL.status = (msg) => { const s = document.getElementById('status'); if (s) s.textContent = msg || ''; };

/* ---- formats ---- */
SL.fmt = {
  dur(ns) {
    if (typeof ns !== 'number' || !isFinite(ns)) return '-';
    if (ns < 0) return '0us';
    if (ns < 1e6) return Math.round(ns / 1e3) + 'us';
    if (ns < 1e9) return (ns / 1e6).toFixed(1) + 'ms';
    if (ns < 60e9) return (ns / 1e9).toFixed(2) + 's';
    if (ns < 3600e9) return (ns / 60e9).toFixed(1) + 'm';
    return (ns / 3600e9).toFixed(1) + 'h';
  },
  secs(s) { return typeof s === 'number' ? SL.fmt.dur(s * 1e9) : '-'; },
  bytes(b) {
    if (typeof b !== 'number' || !isFinite(b)) return '-';
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : String(b)) + u[i];
  },
  num(v, d = 3) {
    if (typeof v !== 'number' || !isFinite(v)) return v === null || v === undefined ? '-' : String(v);
    return Number.isInteger(v) ? String(v) : v.toPrecision(d);
  },
  pct(v) { return typeof v === 'number' ? (v * 100).toFixed(1) + '%' : '-'; },
  /* a value by its unit (series units, stats field suffixes) */
  unit(v, unit) {
    if (unit === 'seconds') return SL.fmt.secs(v);
    if (unit === 'bytes') return SL.fmt.bytes(v);
    if (unit === 'ratio') return SL.fmt.pct(v);
    if (unit === 'usec') return typeof v === 'number' ? SL.fmt.dur(v * 1e3) : '-';
    return SL.fmt.num(v);
  },
  time(iso) { return typeof iso === 'string' ? iso.replace('T', ' ').replace(/\.(\d{3})\d*Z$/, '.$1Z') : '-'; },
  ago(iso) {
    const t = Date.parse(iso);
    if (!isFinite(t)) return '-';
    const s = Math.max(0, (Date.now() - t) / 1000);
    return s < 60 ? s.toFixed(0) + 's ago' : s < 3600 ? (s / 60).toFixed(0) + 'm ago' : (s / 3600).toFixed(1) + 'h ago';
  },
};

/* ISO time with nanoseconds -> ms since the epoch (fraction kept to us). */
SL.timeMs = (iso) => {
  const m = /^(.*?)(\.\d+)?Z$/.exec(iso || '');
  if (!m) return NaN;
  const base = Date.parse(m[1] + 'Z');
  return base + (m[2] ? parseFloat('0' + m[2]) * 1000 : 0);
};

/* ---- DETAILS templates (src/common/detail.h), rendered as plain text ---- */
const SIGNALS = ['', 'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGILL', 'SIGTRAP', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGKILL', 'SIGUSR1',
  'SIGSEGV', 'SIGUSR2', 'SIGPIPE', 'SIGALRM', 'SIGTERM', 'SIGSTKFLT', 'SIGCHLD', 'SIGCONT', 'SIGSTOP', 'SIGTSTP', 'SIGTTIN',
  'SIGTTOU', 'SIGURG', 'SIGXCPU', 'SIGXFSZ', 'SIGVTALRM', 'SIGPROF', 'SIGWINCH', 'SIGIO', 'SIGPWR', 'SIGSYS'];
SL.getPath = (ev, path) => {
  let v = ev;
  for (const p of path.split('.')) { if (v === null || typeof v !== 'object') return undefined; v = v[p]; }
  return v;
};
const truthy = (v) => !(v === undefined || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && !v.length));
const scalar = (v) => v === undefined || v === null ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);
SL.detail = (tmpl, ev) => {
  if (typeof tmpl !== 'string') return '';
  let out = '';
  const stack = []; // each: printing?
  const on = () => stack.every(Boolean);
  for (let i = 0; i < tmpl.length;) {
    const c = tmpl[i];
    if ((c === '{' || c === '}') && tmpl[i + 1] === c) { if (on()) out += c; i += 2; continue; }
    if (c !== '{') { if (on()) out += c; i++; continue; }
    const end = tmpl.indexOf('}', i);
    if (end < 0) break;
    const tok = tmpl.slice(i + 1, end);
    i = end + 1;
    if (tok === '/') { stack.pop(); continue; }
    const op = tok[0];
    if (op === '?' || op === '!' || op === '+') {
      const v = SL.getPath(ev, tok.slice(1));
      stack.push(op === '?' ? truthy(v) : op === '!' ? !truthy(v) : v !== undefined && v !== null);
      continue;
    }
    if (!on()) continue;
    const [name, f] = tok.split(':');
    const v = SL.getPath(ev, name);
    if (f === 'dur' && typeof v === 'number') out += SL.fmt.dur(v);
    else if (f === 'bytes' && typeof v === 'number') out += SL.fmt.bytes(v);
    else if (f === 'sig' && typeof v === 'number') out += SIGNALS[v] || 'SIG' + v;
    else if (f === 'id' && typeof v === 'string') out += v.slice(0, 12);
    else if (f === 'join' && Array.isArray(v)) out += v.map(scalar).join(' ');
    else out += scalar(v);
  }
  return out;
};

/* ---- cached metadata ---- */
SL.meta = { schema: null, kinds: new Map(), health: null };
SL.loadSchema = async () => {
  if (!SL.meta.schema) {
    SL.meta.schema = await SL.api('/api/v1/schema/events');
    for (const k of SL.meta.schema.kinds || []) SL.meta.kinds.set(k.name, k);
  }
  return SL.meta.schema;
};
SL.loadHealth = async () => {
  const r = await fetch('/healthz', { cache: 'no-store', credentials: 'omit' });
  SL.meta.health = await r.json(); // 503 carries the same body
  return SL.meta.health;
};
/* One line of text for an event: its kind's DETAILS template. */
SL.eventText = (ev) => {
  const k = SL.meta.kinds.get(ev.type);
  let s = k ? SL.detail(k.details, ev) : '';
  if (ev.argv_withheld) s += (s ? ' ' : '') + '[argv withheld: admins only]';
  return s;
};

/* Periodic work of the current page: stopped when the page changes. */
SL.timers = [];
SL.every = (ms, fn) => {
  let stopped = false, h = null;
  const run = async () => {
    if (stopped) return;
    try { await fn(); } catch (e) { SL.status(e.message); }
    if (!stopped) h = setTimeout(run, ms);
  };
  const t = { stop() { stopped = true; clearTimeout(h); } };
  SL.timers.push(t);
  run();
  return t;
};
SL.stopTimers = () => { for (const t of SL.timers) t.stop(); SL.timers = []; };

/* Modules of /healthz that run (running or degraded). */
SL.runningModules = (health) => ((health && health.modules) || []).filter((m) => m.state === 'running' || m.state === 'degraded');
/* GET /api/v1/<module> (its main view), null when it has none (404) or
 * cannot answer; remembered per page load for modules without one. */
SL.noView = new Set();
SL.moduleView = async (name) => {
  if (SL.noView.has(name)) return null;
  try { return await SL.api('/api/v1/' + encodeURIComponent(name)); } catch (e) {
    if (e.status === 404) SL.noView.add(name);
    return null;
  }
};
