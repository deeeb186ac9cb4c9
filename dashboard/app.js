/* Personal Understanding dashboard: a read-only view of one archive. The core: helpers, data, routing.
 *
 * Plain JavaScript, no build step, no network. The data sits beside this page as
 * script files: data/dashboard_data.js (window.PU_DATA: overview and manifests) and
 * data/chunks/*.js, each calling PU_CHUNK(name, build, payload) when loaded on demand.
 * Lists come in pages of chunk_rows rows; details (records, captures, follow-ups,
 * sessions) in shards chosen by a hash of the id. All text is inserted as text, never
 * as markup. search.js, pages.js, records.js and graph.js add their pages to PU.pages;
 * the first render waits for them (DOMContentLoaded).
 */
(function () {
  "use strict";

  var PU = window.PU = {pages: {}, nav: {}};
  var D = PU.D = window.PU_DATA;
  var PAGE = PU.PAGE = 100;
  var app = PU.app = document.getElementById("app");
  var errorsEl = document.getElementById("errors");
  var started = (window.performance && performance.now) ? performance.now() : 0;
  PU.REBUILD = "python3 scripts/open_dashboard.py";

  // --- errors: recorded in the page so a person (and the browser test) can see them ---
  function reportError(message) {
    errorsEl.hidden = false;
    errorsEl.appendChild(document.createTextNode("Error: " + message + "\n"));
    errorsEl.setAttribute("data-count", String(Number(errorsEl.getAttribute("data-count") || 0) + 1));
  }
  window.addEventListener("error", function (ev) {
    if (ev.target && ev.target !== window && ev.target.tagName === "SCRIPT") { return; }  // handled by the loader
    if (ev.target && ev.target !== window && ev.target.tagName === "IMG") { return; }  // an attachment preview says so itself
    reportError((ev.message || "script error") + (ev.filename ? " (" + ev.filename.split("/").pop() + ":" + ev.lineno + ")" : ""));
  }, true);
  document.addEventListener("securitypolicyviolation", function (ev) {
    reportError("blocked by the page's security policy: " + ev.violatedDirective + " " + (ev.blockedURI || ""));
  });
  window.addEventListener("unhandledrejection", function (ev) {
    reportError(ev.reason && ev.reason.message ? ev.reason.message : String(ev.reason));
  });

  // --- DOM helpers --------------------------------------------------------------
  function h(tag, attrs) {
    var el = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) { return; }
        if (k === "text") { el.textContent = String(v); } else if (k === "cls") { el.className = v; } else if (k.slice(0, 2) === "on") { el.addEventListener(k.slice(2), v); } else { el.setAttribute(k, v === true ? "" : String(v)); }
      });
    }
    for (var i = 2; i < arguments.length; i++) { add(el, arguments[i]); }
    return el;
  }
  function add(el, child) {
    if (child === null || child === undefined || child === false) { return el; }
    if (Array.isArray(child)) { child.forEach(function (c) { add(el, c); }); return el; }
    el.appendChild(child.nodeType ? child : document.createTextNode(String(child)));
    return el;
  }
  function txt(s) { return document.createTextNode(s === null || s === undefined ? "" : String(s)); }
  function fmt(n) { return n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US"); }
  function hashFor(kind, id) { return "#" + kind + "/" + encodeURIComponent(id); }
  function badge(text, cls) { return text ? h("span", {cls: "badge " + (cls || ""), text: text}) : null; }
  function statusBadge(status) { return status ? badge(status, "st-" + status) : null; }
  function stars(n) { return (n === null || n === undefined) ? null : h("span", {cls: "sal", title: "salience " + n, text: "★★★".slice(0, n) + "☆☆☆".slice(0, 3 - n)}); }
  function kv(rows) {
    var table = h("table", {cls: "kv"});
    rows.forEach(function (r) {
      if (r[1] === null || r[1] === undefined || r[1] === "" || (Array.isArray(r[1]) && !r[1].length)) { return; }
      table.appendChild(h("tr", null, h("th", {text: r[0]}), h("td", null, r[1].nodeType || Array.isArray(r[1]) ? r[1] : txt(r[1]))));
    });
    return table;
  }
  function routeOf(kind) { return kind === "entity" || kind === "concept" ? "entity" : "record"; }
  function itemLink(kind, id, title, extra) { return h("a", {cls: "item-link", href: hashFor(kind, id) + (extra || ""), text: title || id}); }
  Object.assign(PU, {h: h, add: add, txt: txt, fmt: fmt, hashFor: hashFor, badge: badge, statusBadge: statusBadge, stars: stars,
    kv: kv, routeOf: routeOf, itemLink: itemLink});

  // --- times as the person lived them ------------------------------------------------
  // A time given with its offset (occurred_at "…+08:00") is shown in that offset; a UTC
  // stamp (captured_at) in this browser's zone. Either way the zone is named.
  var ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(Z|z|[+-]\d{2}:?\d{2})?$/;
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function zone(minutes) {
    if (!minutes) { return "UTC"; }
    var m = Math.abs(minutes);
    return "UTC" + (minutes < 0 ? "−" : "+") + pad(Math.floor(m / 60)) + ":" + pad(m % 60);
  }
  function localTime(iso) {
    if (!iso) { return ""; }
    var m = ISO.exec(String(iso));
    if (!m) { return String(iso); }
    if (m[7] && m[7] !== "Z" && m[7] !== "z") {
      var off = m[7].replace(":", ""), minutes = (off[0] === "-" ? -1 : 1) * (Number(off.slice(1, 3)) * 60 + Number(off.slice(3, 5)));
      return m[1] + "-" + m[2] + "-" + m[3] + " " + m[4] + ":" + m[5] + " " + zone(minutes);
    }
    var d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] || 0)));
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + pad(d.getHours()) + ":" + pad(d.getMinutes()) +
      " " + zone(-d.getTimezoneOffset());
  }
  function timeEl(iso, prefix, cls) {
    if (!iso) { return null; }
    return h("time", {datetime: iso, title: iso, cls: cls || "when", text: (prefix || "") + localTime(iso)});
  }
  function sameInstant(a, b) { return a && b && Date.parse(a) === Date.parse(b); }
  function saidSaved(said, saved) {
    // "said": when the words were said (occurred_at); "saved": when the archive kept them (captured_at)
    return h("span", {cls: "said"}, timeEl(said, "said "), saved && !sameInstant(said, saved) ? [" · ", timeEl(saved, "saved ", "when saved")] : null);
  }
  function dates(r) {
    if (!r.date_start) { return "date unknown"; }
    return r.date_start + (r.date_end && r.date_end !== r.date_start ? " – " + r.date_end : "") +
      (r.date_precision && r.date_precision !== "day" ? " (" + r.date_precision + ")" : "");
  }
  Object.assign(PU, {localTime: localTime, timeEl: timeEl, saidSaved: saidSaved, dates: dates});

  // --- loading chunks -------------------------------------------------------------
  var chunks = {}, pending = {}, buildMismatch = false;
  window.PU_CHUNK = function (name, build, payload) {
    if (build && D && build.build_id !== D.build.build_id) { buildMismatch = true; banner(); }
    chunks[name] = payload;
    if (pending[name]) { pending[name].forEach(function (p) { p.resolve(payload); }); delete pending[name]; }
  };
  function load(name) {
    if (Object.prototype.hasOwnProperty.call(chunks, name)) { return Promise.resolve(chunks[name]); }
    return new Promise(function (resolve, reject) {
      var first = !pending[name];
      (pending[name] = pending[name] || []).push({resolve: resolve, reject: reject});
      if (!first) { return; }
      var s = document.createElement("script");
      s.src = "data/chunks/" + name + ".js?b=" + encodeURIComponent(D.build.build_id);
      s.charset = "utf-8";
      s.onerror = function () {
        var waiting = pending[name] || [];
        delete pending[name];
        var err = new Error("data file data/chunks/" + name + ".js is missing: rebuild with " + PU.REBUILD);
        waiting.forEach(function (p) { p.reject(err); });
      };
      document.head.appendChild(s);
    });
  }
  function fnv(id) {  // the same hash as dashboard.shard_of
    var x = 0x811c9dc5;
    for (var i = 0; i < id.length; i++) { x ^= id.charCodeAt(i); x = Math.imul(x, 0x01000193) >>> 0; }
    return x >>> 0;
  }
  function getItem(family, id) {
    var n = D.shards[family] || 1;
    return load("item-" + family + "-" + (fnv(id) % n)).then(function (p) { return p[id] || null; });
  }
  function listMeta(name) { return D.lists[name] || {total: 0, chunk_rows: 500, chunks: 1}; }
  function listAll(name) {
    var m = listMeta(name), names = [];
    for (var i = 0; i < m.chunks; i++) { names.push(load("list-" + name + "-" + i)); }
    return Promise.all(names).then(function (parts) { return [].concat.apply([], parts); });
  }
  function listSlice(name, from, to) {
    var m = listMeta(name), first = Math.floor(from / m.chunk_rows), last = Math.floor(Math.max(from, to - 1) / m.chunk_rows), wait = [];
    for (var i = first; i <= last && i < m.chunks; i++) { wait.push(load("list-" + name + "-" + i)); }
    return Promise.all(wait).then(function (parts) {
      var rows = [].concat.apply([], parts), offset = first * m.chunk_rows;
      return rows.slice(from - offset, to - offset);
    });
  }
  Object.assign(PU, {load: load, getItem: getItem, listMeta: listMeta, listAll: listAll});

  // --- banner: when the data was made, its fingerprint, whether it may be stale ---
  var newer = null;
  function age(iso) {
    var t = Date.parse(iso);
    if (isNaN(t)) { return ""; }
    var s = Math.max(0, (Date.now() - t) / 1000);
    if (s < 90) { return "just now"; }
    if (s < 5400) { return Math.round(s / 60) + " min ago"; }
    if (s < 129600) { return Math.round(s / 3600) + " h ago"; }
    return Math.round(s / 86400) + " days ago";
  }
  PU.age = age;
  function banner() {
    var el = document.getElementById("banner");
    el.textContent = "";
    if (!D) { return; }
    var old = Date.now() - Date.parse(D.generated_at) > 86400000;
    el.className = old || buildMismatch || newer ? "stale" : "";
    add(el, ["Data generated ", timeEl(D.generated_at, "", "gen"), " (" + age(D.generated_at) + ") · fingerprint ",
      h("code", {id: "fingerprint", text: D.fingerprint}), h("span", {cls: "wide"}, " · archive ", h("code", {text: D.archive.root}))]);
    if (old) { add(el, h("div", {text: "This data is more than a day old and may be stale: run " + PU.REBUILD + " to refresh it."})); }
    if (newer || buildMismatch) {
      add(el, h("div", {cls: "warnline", text: "The data on disk was rebuilt" + (newer ? " at " + newer.generated_at + " (fingerprint " + newer.fingerprint + ")" : "") + " after this page loaded: reload the page."}));
    }
  }
  window.PU_STAMP = function (build) {
    if (D && build && build.build_id !== D.build.build_id) { newer = build; banner(); }
  };
  function poll() {
    var s = document.createElement("script");
    s.src = "data/stamp.js?t=" + Date.now();
    s.onload = s.onerror = function () { s.remove(); };
    document.head.appendChild(s);
  }

  // --- references between items ---------------------------------------------------
  function refLink(id, refs) {
    var label = refs ? refs[id] : undefined;
    if (label === null) { return h("span", {cls: "missing", title: "not in the archive", text: id + " (missing)"}); }
    if (label === undefined) { return h("code", {text: id}); }
    return h("span", null, h("a", {href: hashFor(routeOf(label.kind), id), text: label.title || id}), " ", badge(label.kind), " ",
      label.status && label.status !== "current" ? statusBadge(label.status) : null);
  }
  function capLink(id, refs, text) {
    var label = refs ? refs[id] : undefined;
    if (label === null) { return h("span", {cls: "missing", text: id + " (missing capture)"}); }
    return h("a", {href: hashFor("capture", id), cls: text ? "" : "mono", text: text || id});
  }
  function idList(ids, refs) {
    if (!ids || !ids.length) { return null; }
    return h("ul", {cls: "links"}, ids.map(function (id) { return h("li", null, refLink(id, refs)); }));
  }
  function quoteBlock(q, refs) {
    var src = h("span", {cls: "src"}, "— ", capLink(q.capture_id, refs), q.said ? [" · ", timeEl(q.said, "said ")] : null,
      q.start !== undefined && q.start !== null ? " [" + q.start + ":" + q.end + "]" : null,
      q.record_id ? [" · ", h("a", {href: hashFor("record", q.record_id), text: "record"})] : null);
    return h("blockquote", {cls: "quote"}, "“" + q.quote + (q.omitted_chars ? "…" : "") + "”",
      q.excerpt ? h("span", {cls: "tag-excerpt", title: "not a marked span: the start of the cited capture", text: "excerpt"}) : null, src);
  }
  function rowQuote(q) { return q ? quoteBlock({capture_id: q.capture_id, quote: q.text, excerpt: q.excerpt}, null) : null; }
  var EXPANSION = [["what_happened", "What happened"], ["felt_then", "Felt then"], ["user_interpretation", "Their interpretation"],
    ["impact", "Impact"], ["meaning_now", "Meaning now"]];
  function expansion(rec) {
    var blocks = EXPANSION.filter(function (f) { return rec[f[0]]; }).map(function (f) {
      return h("div", {cls: "field-block"}, h("div", {cls: "label", text: f[1]}), h("div", {text: rec[f[0]]}));
    });
    return blocks.length ? blocks : null;
  }
  function quotesOf(rec) {
    if (rec.fidelity === "summary_only") { return h("p", {cls: "notice", text: "Summary only: this record rests on an older summary, not on the user's own words (summary debt)."}); }
    if (!rec.quotes || !rec.quotes.length) { return h("p", {cls: "muted", text: "No quotes: this record cites no readable capture."}); }
    return rec.quotes.map(function (q) { return quoteBlock(q, rec.capture_refs); });
  }
  Object.assign(PU, {refLink: refLink, capLink: capLink, idList: idList, quoteBlock: quoteBlock, rowQuote: rowQuote,
    expansion: expansion, quotesOf: quotesOf});

  // --- generic paged list -----------------------------------------------------------
  function listView(opts) {
    // opts: name, params, filters [{key, label, options|check|placeholder}], match(row, params, hit), renderRow(row, prev),
    // empty, noun, hideBar (apply the filters of another list's bar). A "q" filter searches the words (search.js):
    // hit(id) says whether an id matched.
    var params = opts.params, box = h("div", {cls: "list-view"});
    var bar = h("form", {cls: "toolbar", onsubmit: function (e) { e.preventDefault(); apply(); }});
    var inputs = {};
    (opts.filters || []).forEach(function (f) {
      var input;
      if (f.options) {
        input = h("select", {name: f.key}, h("option", {value: "", text: f.any || "any"}), f.options.map(function (o) {
          var val = Array.isArray(o) ? o[0] : o;
          return h("option", {value: val, text: Array.isArray(o) ? o[1] : o, selected: String(params[f.key] || "") === String(val)});
        }));
      } else if (f.check) {
        input = h("input", {type: "checkbox", name: f.key, value: f.check, checked: params[f.key] === f.check});
        inputs[f.key] = input;
        bar.appendChild(h("label", {cls: "check"}, input, f.label));
        return;
      } else {
        input = h("input", {type: f.key === "q" ? "search" : "text", name: f.key, value: params[f.key] || "", placeholder: f.placeholder || ""});
      }
      inputs[f.key] = input;
      bar.appendChild(h("label", null, f.label, input));
    });
    function apply() {
      var next = {};
      Object.keys(inputs).forEach(function (k) {
        var el = inputs[k], v = el.type === "checkbox" ? (el.checked ? el.value : "") : el.value.trim();
        if (v) { next[k] = v; }
      });
      setParams(next);
    }
    if (opts.filters && opts.filters.length && !opts.hideBar) {
      Object.keys(inputs).forEach(function (k) { if (k !== "q") { inputs[k].addEventListener("change", apply); } });
      bar.appendChild(h("span", {cls: "actions"}, h("button", {type: "submit", text: "Apply"}),
        h("button", {type: "button", text: "Clear", onclick: function () { setParams({}); }})));
      // On a phone the filters fold away unless one is in use.
      var active = (opts.filters || []).filter(function (f) { return params[f.key]; }).length;
      box.appendChild(h("details", {cls: "filters", open: active || window.innerWidth > 700},
        h("summary", {text: "Filters" + (active ? " (" + active + " in use)" : "")}), bar));
    }
    var status = h("p", {cls: "muted list-status", text: "Loading…"}), list = h("ol", {cls: "rows", "data-list": opts.name});
    box.appendChild(status);
    box.appendChild(list);
    var pageKey = opts.pageKey || "page", page = Math.max(1, parseInt(params[pageKey] || "1", 10) || 1);
    var filtering = (opts.filters || []).some(function (f) { return params[f.key]; });
    var all = listMeta(opts.name).total, total = all;
    function clamp() { page = Math.min(page, Math.max(1, Math.ceil(total / PAGE))); }
    var q = (params.q || "").trim();
    var got = filtering ? Promise.all([listAll(opts.name), q ? PU.search.ids(q) : null]).then(function (res) {
      var hits = res[1], hit = function (id) { return !hits || hits.has(id); };
      var kept = res[0].filter(function (r) { return opts.match(r, params, hit); });
      total = kept.length;
      clamp();
      return kept.slice((page - 1) * PAGE, page * PAGE);
    }) : (clamp(), listSlice(opts.name, (page - 1) * PAGE, page * PAGE));
    var done = got.then(function (rows) {
      var others = (opts.filters || []).some(function (f) { return f.key !== "q" && params[f.key]; });
      if (total) {
        status.textContent = "Showing " + fmt((page - 1) * PAGE + 1) + "–" + fmt((page - 1) * PAGE + rows.length) + " of " + fmt(total) +
          (filtering ? " matching" + (q ? " “" + q + "”" : "") + " (" + fmt(all) + " in all)" : "");
      } else if (q) {
        status.textContent = "No match for “" + q + "”" + (others ? " with these filters" : "") + " among " + fmt(all) + " " + (opts.noun || "rows") +
          " (their words, titles, summaries and aliases were searched).";
        status.className = "notice nomatch";
      } else {
        status.textContent = filtering ? "No " + (opts.noun || "row") + " matches these filters (" + fmt(all) + " in all)." : (opts.empty || "Nothing here yet.");
      }
      var prev = null;
      rows.forEach(function (r) { add(list, opts.renderRow(r, prev, params)); prev = r; });
      if (total > PAGE) { box.appendChild(pager(page, Math.ceil(total / PAGE), params, pageKey)); }
    });
    box.ready = done;
    return box;
  }
  function pager(page, pages, params, pageKey) {
    function go(p) { var next = Object.assign({}, params); next[pageKey] = String(p); setParams(next); }
    var jump = h("input", {type: "number", min: 1, max: pages, value: page, "aria-label": "page"});
    return h("div", {cls: "pager"},
      h("button", {type: "button", text: "‹ Previous", disabled: page <= 1, onclick: function () { go(page - 1); }}),
      h("span", {text: "page " + page + " of " + pages}),
      h("button", {type: "button", text: "Next ›", disabled: page >= pages, onclick: function () { go(page + 1); }}),
      jump, h("button", {type: "button", text: "Go", onclick: function () { go(Math.min(pages, Math.max(1, parseInt(jump.value, 10) || 1))); }}));
  }
  function upTo(a, b) { var n = Math.min(a.length, b.length); return a.slice(0, n) <= b.slice(0, n); }
  Object.assign(PU, {listView: listView, pager: pager, upTo: upTo});

  // --- routing --------------------------------------------------------------------
  var current = PU.current = {route: "", arg: "", params: {}};
  function parseHash(hash) {
    var raw = (hash === undefined ? location.hash : hash).replace(/^#/, ""), q = raw.indexOf("?"), params = {};
    var path = q >= 0 ? raw.slice(0, q) : raw;
    if (q >= 0) { raw.slice(q + 1).split("&").forEach(function (kvp) { if (!kvp) { return; } var i = kvp.indexOf("="); params[decodeURIComponent(i < 0 ? kvp : kvp.slice(0, i))] = i < 0 ? "" : decodeURIComponent(kvp.slice(i + 1).replace(/\+/g, " ")); }); }
    var slash = path.indexOf("/");
    return {route: (slash >= 0 ? path.slice(0, slash) : path) || "overview", arg: slash >= 0 ? decodeURIComponent(path.slice(slash + 1)) : "", params: params};
  }
  function hashOf(route, arg, params) {
    var qs = Object.keys(params || {}).filter(function (k) { return params[k] !== "" && params[k] !== undefined && params[k] !== null; })
      .map(function (k) { return encodeURIComponent(k) + "=" + encodeURIComponent(params[k]); }).join("&");
    return route + (arg ? "/" + encodeURIComponent(arg) : "") + (qs ? "?" + qs : "");
  }
  function setParams(params) { location.hash = hashOf(current.route, current.arg, params); }
  PU.hashOf = hashOf;
  var renderSeq = 0, trail = [], scrolls = {};
  function render() {
    var hash = location.hash || "#overview";
    if (trail.length) { scrolls[trail[trail.length - 1]] = window.scrollY; }
    // Back to the page before: return to where it was read. Anywhere else: start at the top.
    var back = trail.length > 1 && trail[trail.length - 2] === hash;
    if (back) { trail.pop(); } else { trail.push(hash); }
    if (trail.length > 50) { trail.shift(); }
    var restore = back ? scrolls[hash] || 0 : 0;
    window.scrollTo(0, 0);
    document.body.classList.remove("menu-open");
    document.getElementById("menu-button").setAttribute("aria-expanded", "false");
    current = PU.current = parseHash();
    var seq = ++renderSeq, fn = PU.pages[current.route];
    document.body.setAttribute("data-route", current.route);
    document.body.setAttribute("data-rendered", "");
    highlight(PU.nav[current.route] || current.route);
    var box = document.getElementById("search-box");
    if (current.route === "search" || current.params.q) { box.value = current.params.q || ""; } else if (document.activeElement !== box) { box.value = ""; }
    app.textContent = "";
    if (!fn) { app.appendChild(h("p", {cls: "notice bad", text: "Unknown page #" + current.route + "."})); finish(seq, 0); return; }
    var out;
    try { out = fn(current.arg, current.params); } catch (err) { reportError(err.message + " (rendering #" + current.route + ")"); finish(seq, 0); return; }
    Promise.resolve(out).catch(function (err) { reportError(err.message); app.appendChild(h("p", {cls: "notice bad", text: err.message})); })
      .then(function () { finish(seq, restore); });
  }
  function replaceHash(hash) {  // change the address without a new render (live search)
    try { history.replaceState(null, "", "#" + hash); } catch (e) { return; }
    if (trail.length) { trail[trail.length - 1] = "#" + hash; }
    current = PU.current = parseHash();
  }
  PU.replaceHash = replaceHash;
  function finish(seq, restore) {
    if (seq !== renderSeq) { return; }
    if (restore) { window.scrollTo(0, restore); }
    document.body.setAttribute("data-rendered", current.route);
    if (started !== null && window.performance) {
      document.documentElement.setAttribute("data-first-render-ms", String(Math.round(performance.now() - started)));
      started = null;
    }
  }
  function highlight(pageName) {
    Array.prototype.forEach.call(document.querySelectorAll("#nav a"), function (a) {
      var on = a.getAttribute("data-page") === pageName;
      a.classList.toggle("active", on);
      if (on) { a.setAttribute("aria-current", "page"); } else { a.removeAttribute("aria-current"); }
    });
  }
  PU.highlight = highlight;
  function heading(title, intro) {
    app.appendChild(h("h1", {text: title}));
    if (intro) { app.appendChild(h("p", {cls: "muted intro", text: intro})); }
  }
  function mount(view) { app.appendChild(view); return view.ready; }
  function notFound(what, id) {
    app.appendChild(h("h1", {text: what + " not found"}));
    app.appendChild(h("p", {cls: "notice bad"}, "No " + what.toLowerCase() + " ", h("code", {text: id}),
      " in this data. If it was added after " + D.generated_at + ", rebuild the data with " + PU.REBUILD + "."));
  }
  Object.assign(PU, {heading: heading, mount: mount, notFound: notFound});

  // --- the header: search box and, on a phone, the menu -----------------------------
  function header() {
    var form = document.getElementById("search-form"), box = document.getElementById("search-box"), menu = document.getElementById("menu-button");
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var q = box.value.trim();
      if (q) { location.hash = hashOf("search", "", {q: q}); }
    });
    var timer = null;
    box.addEventListener("input", function () {  // on the search page, results follow the typing
      if (current.route !== "search" || !PU.search) { return; }
      clearTimeout(timer);
      timer = setTimeout(function () { PU.search.retype(box.value.trim()); }, 120);
    });
    menu.addEventListener("click", function () {
      var open = document.body.classList.toggle("menu-open");
      menu.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  // --- start ------------------------------------------------------------------------
  function start() {
    if (!D) {
      app.textContent = "";
      app.appendChild(h("h1", {text: "No dashboard data"}));
      app.appendChild(h("p", {cls: "notice bad", text: "There is no data beside this page (data/dashboard_data.js). Write it for your archive with: python3 scripts/open_dashboard.py"}));
      document.body.setAttribute("data-rendered", "nodata");
      return;
    }
    if (window.history && "scrollRestoration" in history) { history.scrollRestoration = "manual"; }
    header();
    banner();
    window.addEventListener("hashchange", render);
    setInterval(function () { banner(); poll(); }, 30000);
    render();
  }
  document.addEventListener("DOMContentLoaded", start);
}());
