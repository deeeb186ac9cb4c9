/* Personal Understanding audit dashboard: a read-only view of one archive.
 *
 * Plain JavaScript, no build step, no network. The data sits beside this page as
 * script files: data/dashboard_data.js (window.PU_DATA: overview and manifests) and
 * data/chunks/*.js, each calling PU_CHUNK(name, build, payload) when loaded on demand.
 * Lists come in pages of chunk_rows rows; details (records, captures, follow-ups) in
 * shards chosen by a hash of the id. All text is inserted as text, never as markup.
 */
(function () {
  "use strict";

  var D = window.PU_DATA;
  var PAGE = 100;
  var app = document.getElementById("app");
  var errorsEl = document.getElementById("errors");
  var started = (window.performance && performance.now) ? performance.now() : 0;

  // --- errors: recorded in the page so a person (and the browser test) can see them ---
  function reportError(message) {
    errorsEl.hidden = false;
    errorsEl.appendChild(document.createTextNode("Error: " + message + "\n"));
    errorsEl.setAttribute("data-count", String(Number(errorsEl.getAttribute("data-count") || 0) + 1));
  }
  window.addEventListener("error", function (ev) {
    if (ev.target && ev.target !== window && ev.target.tagName === "SCRIPT") { return; }  // handled by the loader
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
        var err = new Error("data file data/chunks/" + name + ".js is missing: rebuild with python3 scripts/open_dashboard.py");
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
  function banner() {
    var el = document.getElementById("banner");
    el.textContent = "";
    if (!D) { return; }
    var old = Date.now() - Date.parse(D.generated_at) > 86400000;
    el.className = old || buildMismatch || newer ? "stale" : "";
    add(el, ["Data generated ", h("time", {datetime: D.generated_at, text: D.generated_at}), " (" + age(D.generated_at) + ") · fingerprint ",
      h("code", {id: "fingerprint", text: D.fingerprint}), " · archive ", h("code", {text: D.archive.root})]);
    if (old) { add(el, h("div", {text: "This data is more than a day old and may be stale: run python3 scripts/open_dashboard.py to refresh it."})); }
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
  function capLink(id, refs) {
    var label = refs ? refs[id] : undefined;
    if (label === null) { return h("span", {cls: "missing", text: id + " (missing capture)"}); }
    return h("a", {href: hashFor("capture", id), cls: "mono", text: id});
  }
  function idList(ids, refs) {
    if (!ids || !ids.length) { return null; }
    return h("ul", {cls: "links"}, ids.map(function (id) { return h("li", null, refLink(id, refs)); }));
  }
  function quoteBlock(q, refs) {
    var src = h("span", {cls: "src"}, "— ", capLink(q.capture_id, refs),
      q.start !== undefined && q.start !== null ? " [" + q.start + ":" + q.end + "]" : null,
      q.record_id ? [" · ", h("a", {href: hashFor("record", q.record_id), text: "record"})] : null);
    return h("blockquote", {cls: "quote"}, "“" + q.quote + (q.omitted_chars ? "…" : "") + "”",
      q.excerpt ? h("span", {cls: "tag-excerpt", title: "not a marked span: the start of the cited capture", text: "excerpt"}) : null, src);
  }
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

  // --- generic paged list -----------------------------------------------------------
  function listView(opts) {
    // opts: name, params, filters [{key, label, options|type}], match(row, params), renderRow(row, prev), empty
    var params = opts.params, box = h("div");
    var bar = h("form", {cls: "toolbar", onsubmit: function (e) { e.preventDefault(); }});
    var inputs = {};
    (opts.filters || []).forEach(function (f) {
      var input;
      if (f.options) {
        input = h("select", {name: f.key}, h("option", {value: "", text: f.any || "any"}), f.options.map(function (o) {
          var val = Array.isArray(o) ? o[0] : o;
          return h("option", {value: val, text: Array.isArray(o) ? o[1] : o, selected: String(params[f.key] || "") === String(val)});
        }));
      } else {
        input = h("input", {type: "text", name: f.key, value: params[f.key] || "", placeholder: f.placeholder || ""});
      }
      inputs[f.key] = input;
      bar.appendChild(h("label", null, f.label, input));
    });
    function apply() {
      var next = {};
      Object.keys(inputs).forEach(function (k) { if (inputs[k].value.trim()) { next[k] = inputs[k].value.trim(); } });
      setParams(next);
    }
    if (opts.filters && opts.filters.length) {
      Object.keys(inputs).forEach(function (k) { inputs[k].addEventListener("change", apply); });
      bar.appendChild(h("button", {type: "submit", text: "Apply", onclick: apply}));
      bar.appendChild(h("button", {type: "button", text: "Clear", onclick: function () { setParams({}); }}));
      box.appendChild(bar);
    }
    var status = h("p", {cls: "muted", text: "Loading…"}), list = h("ol", {cls: "rows", "data-list": opts.name});
    box.appendChild(status);
    box.appendChild(list);
    var pageKey = opts.pageKey || "page", page = Math.max(1, parseInt(params[pageKey] || "1", 10) || 1);
    var filtering = (opts.filters || []).some(function (f) { return params[f.key]; });
    var total = listMeta(opts.name).total;
    function clamp() { page = Math.min(page, Math.max(1, Math.ceil(total / PAGE))); }
    var got = filtering ? listAll(opts.name).then(function (rows) {
      var kept = rows.filter(function (r) { return opts.match(r, params); });
      total = kept.length;
      clamp();
      return kept.slice((page - 1) * PAGE, page * PAGE);
    }) : (clamp(), listSlice(opts.name, (page - 1) * PAGE, page * PAGE));
    var done = got.then(function (rows) {
      status.textContent = total ? "Showing " + fmt((page - 1) * PAGE + 1) + "–" + fmt((page - 1) * PAGE + rows.length) + " of " + fmt(total) +
        (filtering ? " matching (" + fmt(listMeta(opts.name).total) + " in all)" : "") : (opts.empty || "Nothing here yet.");
      var prev = null;
      rows.forEach(function (r) { add(list, opts.renderRow(r, prev)); prev = r; });
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
  function textMatch(q) {
    var needle = (q || "").toLowerCase();
    return function (values) {
      if (!needle) { return true; }
      return values.some(function (v) { return v && String(Array.isArray(v) ? v.join(" ") : v).toLowerCase().indexOf(needle) >= 0; });
    };
  }
  function upTo(a, b) { var n = Math.min(a.length, b.length); return a.slice(0, n) <= b.slice(0, n); }
  function itemLink(kind, id, title) { return h("a", {cls: "item-link", href: hashFor(kind, id), text: title || id}); }

  // --- routing --------------------------------------------------------------------
  var current = {route: "", arg: "", params: {}};
  function parseHash() {
    var raw = location.hash.replace(/^#/, ""), q = raw.indexOf("?"), params = {};
    var path = q >= 0 ? raw.slice(0, q) : raw;
    if (q >= 0) { raw.slice(q + 1).split("&").forEach(function (kvp) { if (!kvp) { return; } var i = kvp.indexOf("="); params[decodeURIComponent(i < 0 ? kvp : kvp.slice(0, i))] = i < 0 ? "" : decodeURIComponent(kvp.slice(i + 1).replace(/\+/g, " ")); }); }
    var slash = path.indexOf("/");
    return {route: (slash >= 0 ? path.slice(0, slash) : path) || "overview", arg: slash >= 0 ? decodeURIComponent(path.slice(slash + 1)) : "", params: params};
  }
  function setParams(params) {
    var qs = Object.keys(params).filter(function (k) { return params[k] !== "" && params[k] !== undefined; })
      .map(function (k) { return encodeURIComponent(k) + "=" + encodeURIComponent(params[k]); }).join("&");
    location.hash = current.route + (current.arg ? "/" + encodeURIComponent(current.arg) : "") + (qs ? "?" + qs : "");
  }
  var PAGES = {
    overview: overviewPage, timeline: timelinePage, entities: entitiesPage, entity: entityRoute, record: recordRoute,
    context: contextPage, facet: facetRoute, knowledge: knowledgePage, hypotheses: hypothesesPage, followups: followupsPage,
    followup: followupRoute, sources: sourcesPage, capture: captureRoute, diagnostics: diagnosticsPage, graph: graphPage
  };
  var NAV = {entity: "entities", record: "timeline", facet: "context", followup: "followups", capture: "sources"};
  var renderSeq = 0;
  function render() {
    current = parseHash();
    var seq = ++renderSeq, fn = PAGES[current.route];
    document.body.setAttribute("data-route", current.route);
    document.body.setAttribute("data-rendered", "");
    highlight(NAV[current.route] || current.route);
    app.textContent = "";
    if (!fn) { app.appendChild(h("p", {cls: "notice bad", text: "Unknown page #" + current.route + "."})); finish(seq); return; }
    var out;
    try { out = fn(current.arg, current.params); } catch (err) { reportError(err.message + " (rendering #" + current.route + ")"); finish(seq); return; }
    Promise.resolve(out).catch(function (err) { reportError(err.message); app.appendChild(h("p", {cls: "notice bad", text: err.message})); })
      .then(function () { finish(seq); });
  }
  function finish(seq) {
    if (seq !== renderSeq) { return; }
    document.body.setAttribute("data-rendered", current.route);
    if (started !== null && window.performance) {
      document.documentElement.setAttribute("data-first-render-ms", String(Math.round(performance.now() - started)));
      started = null;
    }
  }
  function heading(title, intro) {
    app.appendChild(h("h1", {text: title}));
    if (intro) { app.appendChild(h("p", {cls: "muted", text: intro})); }
  }
  function mount(view) { app.appendChild(view); return view.ready; }
  function notFound(what, id) {
    app.appendChild(h("h1", {text: what + " not found"}));
    app.appendChild(h("p", {cls: "notice bad"}, "No " + what.toLowerCase() + " ", h("code", {text: id}),
      " in this data. If it was added after " + D.generated_at + ", rebuild the data with python3 scripts/open_dashboard.py."));
  }

  // --- Overview ---------------------------------------------------------------------
  function countTable(obj) {
    return h("table", {cls: "kv"}, Object.keys(obj || {}).map(function (k) { return h("tr", null, h("th", {text: k}), h("td", {text: fmt(obj[k])})); }));
  }
  function overviewPage() {
    var o = D.overview, c = o.counts, v = o.validation, cards = h("div", {cls: "cards"});
    heading("Overview", "What this archive holds and whether it is healthy. Follow the links for the items behind the numbers.");
    cards.appendChild(h("section", {cls: "card", id: "validation"}, h("h2", {text: "Validation"}),
      h("div", {cls: "big status-" + v.status, id: "validation-status", text: v.status}),
      h("div", {text: fmt(v.errors) + " error(s), " + fmt(v.warnings) + " warning(s)"}),
      v.problems.length ? h("ul", {cls: "links"}, v.problems.slice(0, 8).map(function (p) { return h("li", {cls: p.severity === "error" ? "bad" : "warn", text: p.text}); })) : null,
      h("a", {href: "#diagnostics", text: v.total_problems ? "all " + fmt(v.total_problems) + " problem(s) in Diagnostics" : "Diagnostics"})));
    cards.appendChild(h("section", {cls: "card"}, h("h2", {text: "Records"}), h("div", {cls: "big", text: fmt(c.records)}),
      c.redirected ? h("div", {cls: "muted", text: fmt(c.redirected) + " merged entity id(s) redirect to their canonical entity"}) : null,
      h("h3", {text: "by layer"}), countTable(c.by_layer), h("h3", {text: "by kind"}), countTable(c.by_kind)));
    var t = o.tiers || {};
    cards.appendChild(h("section", {cls: "card"}, h("h2", {text: "Captures (the user's words)"}), h("div", {cls: "big", text: fmt(c.captures)}),
      h("h3", {text: "by tier"}), h("table", {cls: "kv"}, ["short_term", "long_term", "archive"].map(function (k) {
        var x = t[k] || {captures: 0, chars: 0};
        return h("tr", null, h("th", {text: k.replace("_", "-")}), h("td", {text: fmt(x.captures) + " captures · " + fmt(x.chars) + " chars"}));
      })), h("div", {cls: "muted", text: fmt(t.bytes_on_disk) + " bytes on disk"}), h("h3", {text: "by ledger status"}), countTable(c.by_capture_status),
      h("a", {href: "#sources", text: "all sources"})));
    var b = o.backup;
    cards.appendChild(h("section", {cls: "card", id: "backup"}, h("h2", {text: "Last backup"}),
      b.never ? h("div", {cls: "big bad", text: "never"}) : [h("div", {cls: "big", text: age(b.last_backup_at)}), h("div", {cls: "muted", text: b.last_backup_at})]));
    cards.appendChild(h("section", {cls: "card", id: "due"}, h("h2", {text: "Due follow-ups"}), h("div", {cls: "big", text: fmt(o.due_total)}),
      o.due_followups.length ? h("ul", {cls: "links"}, o.due_followups.map(function (f) {
        return h("li", null, h("a", {href: hashFor("followup", f.id), text: f.question}), " ", h("span", {cls: "muted", text: (f.due_at || "").slice(0, 10)}));
      })) : h("p", {cls: "muted", text: "Nothing due as of " + D.generated_at + "."}), h("a", {href: "#followups", text: "all follow-ups"})));
    cards.appendChild(h("section", {cls: "card"}, h("h2", {text: "Summary debt"}), h("div", {cls: o.summary_debt ? "big warn" : "big", text: fmt(o.summary_debt)}),
      h("p", {cls: "muted", text: "records resting on summaries without the user's words"}), h("a", {href: "#diagnostics", text: "list in Diagnostics"})));
    var pc = o.pending_captures;
    cards.appendChild(h("section", {cls: "card", id: "pending"}, h("h2", {text: "Pending captures"}), h("div", {cls: pc.total ? "big warn" : "big", text: fmt(pc.total)}),
      pc.items.length ? h("ul", {cls: "links"}, pc.items.map(function (p) { return h("li", null, h("a", {href: hashFor("capture", p.id), cls: "mono", text: p.id})); })) :
        h("p", {cls: "muted", text: "Every capture is derived or closed with a reason."})));
    app.appendChild(cards);
  }

  // --- Timeline -------------------------------------------------------------------
  function when(r) {
    if (!r.date_start) { return "date unknown"; }
    return r.date_start + (r.date_end && r.date_end !== r.date_start ? " – " + r.date_end : "") + (r.date_precision && r.date_precision !== "day" ? " (" + r.date_precision + ")" : "");
  }
  function timelinePage(_arg, params) {
    var f = D.filters.timeline;
    heading("Timeline", "The life spine: events, states and decisions by phase, then date. Open one to see its expansion and the user's words.");
    var match = textMatch(params.q);
    return mount(listView({
      name: "timeline", params: params,
      filters: [
        {key: "kind", label: "kind", options: f.kinds},
        {key: "salience", label: "salience at least", options: [["1", "1 supporting"], ["2", "2 key"], ["3", "3 pivotal"]]},
        {key: "domain", label: "domain", options: f.domains},
        {key: "phase", label: "phase", options: f.phases},
        {key: "from", label: "from (YYYY[-MM[-DD]])", placeholder: "2019"},
        {key: "to", label: "to", placeholder: "2021-06"},
        {key: "q", label: "words", placeholder: "title or quote"}],
      match: function (r, p) {
        if (p.kind && r.kind !== p.kind) { return false; }
        if (p.salience && (r.salience || 0) < Number(p.salience)) { return false; }
        if (p.domain && r.domain !== p.domain) { return false; }
        if (p.phase && r.phase !== p.phase) { return false; }
        if ((p.from || p.to) && !r.date_start) { return false; }
        if (p.to && !upTo(r.date_start, p.to)) { return false; }
        if (p.from && !upTo(p.from, r.date_end || r.date_start)) { return false; }
        return match([r.title, r.id, r.quote && r.quote.text]);
      },
      renderRow: function (r, prev) {
        var out = [];
        if (!prev || (prev.phase || "") !== (r.phase || "")) { out.push(h("li", {cls: "group", text: r.phase ? "phase: " + r.phase : "no phase given"})); }
        var more = h("div", {cls: "exp"}, h("span", {cls: "muted", text: "loading…"}));
        var det = h("details", {cls: "expand"}, h("summary", {text: "expansion and quotes"}), more);
        det.addEventListener("toggle", function () {
          if (!det.open || det.getAttribute("data-loaded")) { return; }
          det.setAttribute("data-loaded", "1");
          getItem("rec", r.id).then(function (rec) {
            more.textContent = "";
            if (!rec) { add(more, h("span", {cls: "missing", text: "not in this data"})); return; }
            add(more, [expansion(rec) || h("p", {cls: "muted", text: "No expansion recorded."}), quotesOf(rec)]);
          });
        });
        out.push(h("li", {id: "row-" + r.id, "data-id": r.id},
          h("div", {cls: "row-head"}, h("span", {cls: "when", text: when(r)}), itemLink("record", r.id, r.title), badge(r.kind, "kind-" + r.kind),
            stars(r.salience), badge(r.domain), r.status !== "current" ? statusBadge(r.status) : null,
            r.fidelity === "summary_only" ? badge("summary only", "st-uncertain") : null),
          r.quote ? quoteBlock({capture_id: r.quote.capture_id, quote: r.quote.text, excerpt: r.quote.excerpt}, null) : null, det));
        return out;
      }
    }));
  }

  // --- Records and entities ------------------------------------------------------
  function recordRoute(id) {
    return getItem("rec", id).then(function (rec) {
      if (!rec) { notFound("Record", id); return; }
      renderRecord(rec);
    });
  }
  function entityRoute(id) { return recordRoute(id); }
  var HOME = {event: "timeline", state: "timeline", decision: "timeline", entity: "entities", context: "context",
    hypothesis: "hypotheses", intent: "hypotheses"};
  function highlight(pageName) {
    Array.prototype.forEach.call(document.querySelectorAll("#nav a"), function (a) {
      a.classList.toggle("active", a.getAttribute("data-page") === pageName);
    });
  }
  function renderRecord(rec) {
    var refs = rec.refs || {};
    highlight(rec.kind === "entity" && rec.entity_type === "concept" ? "knowledge" : HOME[rec.kind] || "knowledge");
    var kindLabel = rec.kind === "entity" && rec.entity_type === "concept" ? "concept card" : rec.kind;
    app.appendChild(h("h1", {id: "record-title"}, rec.title || rec.id, " ", badge(kindLabel, "kind-" + rec.kind), " ", statusBadge(rec.status),
      rec.sensitivity && rec.sensitivity !== "ordinary" ? [" ", badge(rec.sensitivity, "private")] : null));
    app.appendChild(h("p", {cls: "id", text: rec.id}));
    if (rec.status === "redirected") {
      app.appendChild(h("div", {cls: "notice", id: "redirect-notice"}, "This entity id was merged into ", refLink(rec.canonical_id, refs),
        rec.merge_reason ? ". Reason: “" + rec.merge_reason + "”" : "", rec.merged_at ? " (" + rec.merged_at + ")" : "", ". References to it resolve to the canonical entity."));
    }
    if (rec.superseded_by) { app.appendChild(h("div", {cls: "notice"}, "Superseded by ", refLink(rec.superseded_by, refs), "; this version stays readable.")); }
    if (rec.summary && rec.summary !== rec.claim) { app.appendChild(h("p", {cls: "summary", text: rec.summary})); }
    if (rec.kind === "entity") { renderEntity(rec, refs); }
    if (rec.kind === "hypothesis" || rec.kind === "intent") { renderHypothesis(rec, refs); }
    var exp = expansion(rec);
    if (exp) { app.appendChild(h("h2", {text: "Expansion (from the user's words)"})); add(app, exp); }
    var cardLike = rec.kind === "entity" || rec.kind === "context" || rec.kind === "hypothesis" || rec.kind === "intent";
    if (!cardLike || (rec.quotes && rec.quotes.length)) {
      app.appendChild(h("h2", {text: "The user's words"}));
      add(app, quotesOf(rec));
    }
    app.appendChild(h("h2", {text: "Fields"}));
    app.appendChild(kv([["kind", rec.kind], ["domain", rec.domain], ["layer", rec.layer], ["salience", rec.salience === undefined ? null : String(rec.salience) + (rec.salience_basis ? " (" + rec.salience_basis + ")" : "")],
      ["confidence", rec.confidence === undefined ? null : String(rec.confidence)], ["sensitivity", rec.sensitivity], ["fidelity", rec.fidelity],
      ["dates", rec.date_start ? when(rec) + (rec.date_basis ? ", basis " + rec.date_basis : "") : (rec.kind === "event" ? "unknown" : null)],
      ["phase", rec.phase], ["subject", rec.subject_key], ["aspect", rec.aspect], ["entity type", rec.entity_type],
      ["aliases", (rec.aliases || []).join(" · ")], ["tags", (rec.tags || []).join(" · ")],
      ["unresolved referents", (rec.unresolved_referents || []).join(" · ")],
      ["version", rec.version === undefined ? null : String(rec.version)], ["created", rec.created_at], ["updated", rec.updated_at]]));
    var links = [["Entities", rec.entity_refs], ["Related", rec.related_ids], ["Supersedes", rec.supersedes], ["Contradicts", rec.kind === "hypothesis" || rec.kind === "intent" ? null : rec.contradicts],
      ["Supports", rec.kind === "hypothesis" || rec.kind === "intent" ? null : rec.supports], ["Before (time neighbour)", rec.before_ids], ["After (time neighbour)", rec.after_ids]];
    var any = links.filter(function (l) { return l[1] && l[1].length; });
    if (any.length) {
      app.appendChild(h("h2", {text: "Links"}));
      any.forEach(function (l) { app.appendChild(h("h3", {text: l[0]})); app.appendChild(idList(l[1], refs)); });
    }
    var caps = Object.keys(rec.capture_refs || {});
    if (caps.length) {
      app.appendChild(h("h2", {text: "Sources"}));
      app.appendChild(h("ul", {cls: "links"}, caps.map(function (c) {
        var info = rec.capture_refs[c];
        return h("li", null, capLink(c, rec.capture_refs), info ? h("span", {cls: "muted", text: " said " + info.captured_at + " · " + info.status}) : null);
      })));
    }
    if (rec.referrers && rec.referrers.length) {
      app.appendChild(h("h2", {text: "Pointed at by (" + fmt(rec.referrers_total) + ")"}));
      app.appendChild(h("ul", {cls: "links"}, rec.referrers.map(function (r) { return h("li", null, refLink(r[0], refs), h("span", {cls: "muted", text: " via " + r[1]})); })));
    }
  }
  function renderEntity(rec, refs) {
    var p = rec.page || {};
    app.appendChild(kv([["mentions", fmt(p.mentions)], ["aliases", (rec.aliases || []).join(" · ")]]));
    if (rec.identities && rec.identities.length) {
      app.appendChild(h("h2", {text: "Identities"}));
      app.appendChild(h("ul", {cls: "links"}, rec.identities.map(function (i) { return h("li", {text: [i.platform, i.handle, i.display_name, i.status].filter(Boolean).join(" · ")}); })));
    }
    if (p.merged && p.merged.length) {
      app.appendChild(h("h2", {text: "Merged into this entity"}));
      app.appendChild(h("ul", {cls: "links", id: "merged-from"}, p.merged.map(function (m) {
        return h("li", null, h("a", {href: hashFor("entity", m.id), cls: "mono", text: m.id}), " (" + (m.title || "") + ") → here",
          m.merge_reason ? h("span", {cls: "muted", text: " · reason: " + m.merge_reason}) : null);
      })));
    }
    app.appendChild(h("h2", {text: "Stories (" + fmt(p.total_stories || 0) + ")"}));
    add(app, idList(p.stories, refs) || h("p", {cls: "muted", text: "No stories point at this entity yet."}));
    if (p.current_states && p.current_states.length) { app.appendChild(h("h2", {text: "Current states"})); app.appendChild(idList(p.current_states, refs)); }
    if (p.context_cards && p.context_cards.length) { app.appendChild(h("h2", {text: "Context cards"})); app.appendChild(idList(p.context_cards, refs)); }
    if (p.quotes && p.quotes.length) {
      app.appendChild(h("h2", {text: "Quotes"}));
      add(app, p.quotes.map(function (q) { return quoteBlock(q, null); }));
    }
  }
  function renderHypothesis(rec, refs) {
    app.appendChild(h("div", {cls: "notice", text: "A model hypothesis, not a fact: only the user's own words can confirm it."}));
    app.appendChild(kv([["claim", rec.claim], ["mechanism", rec.mechanism], ["alternatives", (rec.alternatives || []).join(" · ")], ["scope", rec.scope],
      ["confidence", rec.confidence === undefined ? null : String(rec.confidence)], ["expires", rec.expires_at]]));
    app.appendChild(h("h2", {text: "Supporting records"}));
    add(app, idList(rec.supports, refs) || h("p", {cls: "warn", text: "none"}));
    app.appendChild(h("h2", {text: "Counter-evidence"}));
    add(app, idList(rec.contradicts, refs) || h("p", {cls: "warn", text: "None listed: look for what would contradict it before relying on it."}));
    if (rec.review) {
      app.appendChild(h("h2", {text: "Review"}));
      app.appendChild(kv([["verdict", rec.review.status], ["note", rec.review.note], ["at", rec.review.at],
        ["confirmation", rec.review.capture_id ? capLink(rec.review.capture_id, rec.capture_refs) : null]]));
    }
  }
  function entitiesPage(_arg, params) {
    heading("Entities", "People, places, groups, works and things, by how often records mention them. Merged ids are listed under Redirects.");
    var match = textMatch(params.q);
    var dir = mount(listView({
      name: "entities", params: params,
      filters: [{key: "type", label: "type", options: D.filters.entities.types.filter(Boolean)}, {key: "q", label: "name or alias"}],
      match: function (r, p) { return (!p.type || r.entity_type === p.type) && match([r.title, r.id, r.aliases]); },
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("entity", r.id, r.title), badge(r.entity_type),
          h("span", {cls: "muted", text: fmt(r.mentions) + " mention(s)"}), h("span", {cls: "id", text: r.id})),
          r.aliases.length ? h("div", {cls: "muted", text: "aliases: " + r.aliases.join(" · ") + (r.alias_count > r.aliases.length ? " …" : "")}) : null);
      }
    }));
    app.appendChild(h("h2", {id: "redirects", text: "Redirects (merged entities)"}));
    var red = mount(listView({
      name: "redirects", params: params, pageKey: "rpage", empty: "No entity has been merged.",
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("entity", r.id, r.id), h("span", {text: "→"}),
          r.canonical_exists ? h("a", {href: hashFor("entity", r.redirect_to), text: (r.canonical_title || r.redirect_to) + " (" + r.redirect_to + ")"}) :
            h("span", {cls: "missing", text: r.redirect_to + " (missing)"})),
          h("div", {cls: "muted", text: "was “" + (r.title || "") + "” · reason: " + (r.merge_reason || "none given") + (r.merged_at ? " · " + r.merged_at : "")}));
      }
    }));
    return Promise.all([dir, red]);
  }

  // --- Context cards and facets -----------------------------------------------------
  function entityChip(e) { return e[2] ? h("a", {href: hashFor("entity", e[0]), text: e[1] || e[0]}) : h("span", {cls: "missing", text: e[0] + " (missing)"}); }
  function contextPage(_arg, params) {
    heading("Context cards", "Cards that tie entities sharing stories, and facets derived from co-occurrence in at least two events (never a cause).");
    var cards = mount(listView({
      name: "context", params: params, empty: "No context cards yet.",
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("record", r.id, r.title), statusBadge(r.status !== "current" ? r.status : null)),
          r.summary ? h("p", {cls: "summary", text: r.summary}) : null,
          r.entities.length ? h("div", {cls: "muted"}, "ties: ", r.entities.map(function (e, i) { return [i ? " · " : "", entityChip(e)]; })) : null);
      }
    }));
    app.appendChild(h("h2", {text: "Derived facets (co-occurrence)"}));
    var facets = mount(listView({
      name: "facets", params: params, pageKey: "fpage", empty: "No two entities share two events yet.",
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("facet", r.id, (r.entities[0][1] || r.entities[0][0]) + " × " + (r.entities[1][1] || r.entities[1][0])),
          h("span", {cls: "muted", text: fmt(r.events) + " shared events"})));
      }
    }));
    return Promise.all([cards, facets]);
  }
  function facetRoute(id) {
    return listAll("facets").then(function (rows) {
      var f = rows.filter(function (r) { return r.id === id; })[0];
      if (!f) { notFound("Facet", id); return; }
      heading("Facet: " + (f.entities[0][1] || f.entities[0][0]) + " × " + (f.entities[1][1] || f.entities[1][0]), "These entities appear together in " + f.events + " events. Co-occurrence, not a cause.");
      app.appendChild(h("p", null, entityChip(f.entities[0]), " · ", entityChip(f.entities[1])));
      app.appendChild(h("ul", {cls: "links"}, f.event_ids.map(function (e) { return h("li", null, h("a", {href: hashFor("record", e), text: f.event_titles[e] || e})); })));
    });
  }

  // --- Knowledge, hypotheses, follow-ups, sources --------------------------------
  function knowledgePage(_arg, params) {
    heading("Knowledge", "Facts, preferences, rules, models, values, heuristics, fragments and concept cards.");
    var match = textMatch(params.q);
    return mount(listView({
      name: "knowledge", params: params,
      filters: [{key: "kind", label: "kind", options: D.filters.knowledge.kinds}, {key: "q", label: "words"}],
      match: function (r, p) { return (!p.kind || r.kind === p.kind) && match([r.title, r.summary, r.id, r.aliases]); },
      renderRow: function (r, prev) {
        var out = [];
        if (!prev || prev.kind !== r.kind) { out.push(h("li", {cls: "group", text: r.kind})); }
        out.push(h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink(r.kind === "concept" ? "entity" : "record", r.id, r.title), badge(r.kind),
          r.status !== "current" ? statusBadge(r.status) : null, badge(r.domain), r.fidelity === "summary_only" ? badge("summary only", "st-uncertain") : null),
          r.summary ? h("p", {cls: "summary", text: r.summary}) : null,
          r.aliases && r.aliases.length ? h("div", {cls: "muted", text: "aliases: " + r.aliases.join(" · ")}) : null));
        return out;
      }
    }));
  }
  function hypothesesPage(_arg, params) {
    heading("Hypotheses", "The model's guesses, kept apart from facts: candidates, confirmed and rejected, with their evidence.");
    return mount(listView({
      name: "hypotheses", params: params, empty: "No hypotheses.",
      filters: [{key: "status", label: "status", options: ["candidate", "confirmed", "rejected", "expired"]}],
      match: function (r, p) { return !p.status || r.status === p.status; },
      renderRow: function (r, prev) {
        var out = [];
        if (!prev || prev.status !== r.status) { out.push(h("li", {cls: "group", text: r.status})); }
        out.push(h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("record", r.id, r.title), badge(r.kind), statusBadge(r.status),
          r.confidence !== null && r.confidence !== undefined ? h("span", {cls: "muted", text: "confidence " + r.confidence}) : null),
          h("p", {cls: "summary", text: r.claim}),
          h("div", {cls: r.contradicts ? "muted" : "warn", text: fmt(r.supports) + " supporting · " + (r.contradicts ? fmt(r.contradicts) + " counter-evidence" : "no counter-evidence listed")}),
          r.review_note ? h("div", {cls: "muted", text: "review: " + r.review_note}) : null));
        return out;
      }
    }));
  }
  var BUCKETS = {due: "Due", upcoming: "Upcoming (next 3 days)", later: "Later", undated: "Undated (never due)", closed: "Closed"};
  function followupsPage(_arg, params) {
    heading("Follow-ups", "Things to ask about later, each tied to the words that raised it. Due status as of " + D.generated_at + ".");
    return mount(listView({
      name: "followups", params: params, empty: "No follow-ups.",
      filters: [{key: "bucket", label: "show", options: Object.keys(BUCKETS).map(function (k) { return [k, BUCKETS[k]]; })}],
      match: function (r, p) { return !p.bucket || r.bucket === p.bucket; },
      renderRow: function (r, prev) {
        var out = [];
        if (!prev || prev.bucket !== r.bucket) { out.push(h("li", {cls: "group", text: BUCKETS[r.bucket]})); }
        out.push(h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("followup", r.id, r.question), badge(r.bucket, "b-" + r.bucket),
          r.due_at ? h("span", {cls: "when", text: "due " + r.due_at.slice(0, 10)}) : null, r.resolution ? badge(r.resolution) : null),
          r.note ? h("div", {cls: "muted", text: "resolution: " + r.note}) : null));
        return out;
      }
    }));
  }
  function followupRoute(id) {
    return getItem("fu", id).then(function (f) {
      if (!f) { notFound("Follow-up", id); return; }
      heading(f.question);
      app.appendChild(h("p", {cls: "id", text: f.id}));
      var capRefs = {};
      capRefs[f.capture_id] = f.capture_exists ? {} : null;
      if (f.said) { app.appendChild(quoteBlock({capture_id: f.capture_id, quote: f.said, excerpt: true}, capRefs)); }
      app.appendChild(kv([["state", BUCKETS[f.bucket]], ["status", f.status], ["due", f.due_at], ["due rule", f.due_rule], ["context", f.context],
        ["expectation", f.expectation], ["said at", f.said_at], ["source", f.capture_id ? capLink(f.capture_id, capRefs) : "none (FOLLOWUP_NO_SOURCE)"],
        ["created", f.created_at], ["last checked", f.last_checked_at]]));
      if (f.resolution) {
        app.appendChild(h("h2", {text: "Resolution"}));
        app.appendChild(kv([["channel", f.resolution.channel], ["note", f.resolution.note], ["at", f.resolution.at],
          ["answer", f.resolution.capture_id ? h("a", {href: hashFor("capture", f.resolution.capture_id), cls: "mono", text: f.resolution.capture_id}) : null]]));
      }
    });
  }
  function sourcesPage(_arg, params) {
    heading("Sources", "Every capture of the user's words: its SHA-256, when it was said, its tier and ledger status, and the records derived from it. Newest first.");
    return mount(listView({
      name: "sources", params: params,
      filters: [{key: "status", label: "ledger status", options: ["pending", "derived", "no-derivation-needed"]},
        {key: "tier", label: "tier", options: ["short_term", "long_term", "archive"]}, {key: "q", label: "id, turn or hash"}],
      match: function (r, p) { return (!p.status || r.status === p.status) && (!p.tier || r.tier === p.tier) && textMatch(p.q)([r.id, r.turn_id, r.sha256]); },
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, h("span", {cls: "when", text: (r.occurred_at || r.captured_at || "").slice(0, 16).replace("T", " ")}),
          itemLink("capture", r.id, r.id), statusBadge(r.status), badge(r.tier), badge(r.speaker), r.kind === "attachment" ? badge("attachment") : null,
          h("span", {cls: "muted", text: fmt(r.records) + " record(s)"})), h("div", {cls: "id", text: "sha256 " + r.sha256}));
      }
    }));
  }
  function captureRoute(id) {
    return getItem("cap", id).then(function (c) {
      if (!c) { notFound("Capture", id); return; }
      heading("Capture " + c.id);
      if (c.missing) { app.appendChild(h("p", {cls: "notice bad", text: "The capture file is missing or unreadable: see Diagnostics."})); }
      else {
        app.appendChild(h("h2", {text: "The words" + (c.omitted_chars ? " (first " + fmt(c.text.length) + " characters; " + fmt(c.omitted_chars) + " more in the file)" : "")}));
        app.appendChild(h("div", {cls: "words", id: "capture-text", text: c.text}));
      }
      app.appendChild(h("h2", {text: "Capture"}));
      app.appendChild(kv([["SHA-256", h("code", {text: c.sha256})], ["file", h("code", {text: D.archive.root + "/" + c.path})], ["captured", c.captured_at],
        ["occurred", c.occurred_at], ["speaker", c.speaker], ["source", c.source], ["kind", c.kind], ["turn", c.turn_id], ["session", c.session_id],
        ["tier", c.tier], ["ledger status", c.status], ["reason", c.reason], ["closed at", c.finalized_at]]));
      app.appendChild(h("h2", {text: "Records derived from it (" + c.records.length + ")"}));
      add(app, idList(c.records, c.refs) || h("p", {cls: "muted", text: c.status === "no-derivation-needed" ? "None needed: " + (c.reason || "") : "None yet."}));
      if (c.followups.length) {
        app.appendChild(h("h2", {text: "Follow-ups raised by it"}));
        app.appendChild(h("ul", {cls: "links"}, c.followups.map(function (f) { return h("li", null, h("a", {href: hashFor("followup", f), cls: "mono", text: f})); })));
      }
      if (c.turn_id) { app.appendChild(h("p", {cls: "muted", text: "The whole turn (receipt, closure, retrievals): python3 scripts/pipeline_view.py --turn-id " + c.turn_id})); }
    });
  }

  // --- Diagnostics ------------------------------------------------------------------
  function diagnosticsPage() {
    heading("Diagnostics", "Where the files are, what validation found, and the gaps worth a look.");
    return load("diagnostics").then(function (g) {
      var v = g.validation;
      app.appendChild(h("h2", {text: "Validation"}));
      app.appendChild(h("p", null, h("span", {cls: "big status-" + v.status, id: "diag-status", text: v.status}), " ",
        fmt(v.errors) + " error(s), " + fmt(v.warnings) + " warning(s); checked " + fmt(v.checked.captures) + " captures, " + fmt(v.checked.records) + " records, " + fmt(v.checked.receipts) + " receipts"));
      section(v.problems, "No problems.", ["severity", "code", "where", "message"], function (p) {
        return [p.severity, p.code, (p.path || "") + (p.line ? ":" + p.line : ""), p.message];
      });
      app.appendChild(h("h2", {text: "Files"}));
      app.appendChild(kv(g.paths.dirs.map(function (d) { return [d[0], h("code", {text: d[1]})]; })));
      app.appendChild(h("table", {cls: "grid"}, h("tr", null, h("th", {text: "file"}), h("th", {text: "bytes"})),
        g.paths.files.map(function (f) { return h("tr", null, h("td", null, h("code", {text: f.path})), h("td", {text: f.bytes === null ? "absent" : fmt(f.bytes)})); })));
      app.appendChild(h("h2", {text: "Summary debt"}));
      section(g.summary_debt, "None: every record rests on the user's words.", ["record", "kind"], function (r) { return [rl(r.id, r.title), r.kind]; });
      app.appendChild(h("h2", {text: "Events with unknown dates"}));
      section(g.unknown_dates, "None.", ["event", "precision"], function (r) { return [rl(r.id, r.title), r.date_precision || "no date"]; });
      app.appendChild(h("h2", {text: "Long stretches without events (" + g.gap_days + "+ days)"}));
      section(g.date_gaps, "None.", ["from", "to", "days", "between"], function (r) { return [r.from, r.to, fmt(r.days), h("span", null, rl(r.before_id, r.before_id), " → ", rl(r.after_id, r.after_id))]; });
      app.appendChild(h("h2", {text: "Dangling references"}));
      section(g.dangling, "None.", ["record", "field", "points at (missing)"], function (r) { return [rl(r.id, r.id), r.field, h("span", {cls: "missing", text: r.target})]; });
      app.appendChild(h("h2", {text: "Unresolved referents"}));
      section(g.unresolved_referents, "None.", ["record", "referents"], function (r) { return [rl(r.id, r.title), (r.referents || []).join(" · ")]; });
      app.appendChild(h("h2", {text: "Hypotheses without counter-evidence"}));
      section(g.hypotheses_without_counter_evidence, "None.", ["hypothesis", "status"], function (r) { return [rl(r.id, r.title), r.status]; });
    });
  }
  function rl(id, title) { return h("a", {href: hashFor("record", id), text: title || id}); }
  function section(bounded, emptyText, heads, cells) {
    if (!bounded.total) { app.appendChild(h("p", {cls: "muted", text: emptyText})); return; }
    if (bounded.total > bounded.items.length) { app.appendChild(h("p", {cls: "muted", text: "showing " + fmt(bounded.items.length) + " of " + fmt(bounded.total)})); }
    app.appendChild(h("table", {cls: "grid"}, h("tr", null, heads.map(function (x) { return h("th", {text: x}); })),
      bounded.items.map(function (r) { return h("tr", null, cells(r).map(function (c) { return h("td", null, c && c.nodeType ? c : txt(c)); })); })));
  }

  // --- Graph: a small force layout of our own, drawn as SVG --------------------------
  var SVG = "http://www.w3.org/2000/svg";
  function s(tag, attrs) { var el = document.createElementNS(SVG, tag); Object.keys(attrs || {}).forEach(function (k) { el.setAttribute(k, attrs[k]); }); return el; }
  function layout(n, edges, w, hgt) {
    // Fruchterman-Reingold with gravity toward the centre, unbounded; the result is then fitted into the view.
    var x = new Float64Array(n), y = new Float64Array(n), dx = new Float64Array(n), dy = new Float64Array(n);
    for (var i = 0; i < n; i++) { var a = 2.399963 * i, r = 10 * Math.sqrt(i + 1); x[i] = r * Math.cos(a); y[i] = r * Math.sin(a); }
    var k = 40, far = 36 * k * k, temp = 80, rounds = n > 200 ? 160 : 250;
    for (var it = 0; it < rounds; it++) {
      dx.fill(0); dy.fill(0);
      for (i = 0; i < n; i++) {
        for (var j = i + 1; j < n; j++) {
          var ex = x[i] - x[j], ey = y[i] - y[j], d2 = ex * ex + ey * ey + 0.01;
          if (d2 > far) { continue; }  // distant nodes do not push: components stay near each other
          var f = k * k / d2;
          dx[i] += ex * f; dy[i] += ey * f; dx[j] -= ex * f; dy[j] -= ey * f;
        }
      }
      edges.forEach(function (e) {
        var ex = x[e[0]] - x[e[1]], ey = y[e[0]] - y[e[1]], d = Math.sqrt(ex * ex + ey * ey) + 0.01, f = d / k;
        dx[e[0]] -= ex * f; dy[e[0]] -= ey * f; dx[e[1]] += ex * f; dy[e[1]] += ey * f;
      });
      for (i = 0; i < n; i++) {
        dx[i] -= x[i] * 0.05; dy[i] -= y[i] * 0.05;
        var len = Math.sqrt(dx[i] * dx[i] + dy[i] * dy[i]) + 0.01, step = Math.min(len, temp);
        x[i] += dx[i] / len * step; y[i] += dy[i] / len * step;
      }
      temp = Math.max(1, temp * 0.97);
    }
    var x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity, pad = 30;
    for (i = 0; i < n; i++) { x0 = Math.min(x0, x[i]); x1 = Math.max(x1, x[i]); y0 = Math.min(y0, y[i]); y1 = Math.max(y1, y[i]); }
    var scale = Math.min((w - 2 * pad - 120) / Math.max(1, x1 - x0), (hgt - 2 * pad) / Math.max(1, y1 - y0), 3);
    var ox = (w - (x1 - x0) * scale) / 2 - 40, oy = (hgt - (y1 - y0) * scale) / 2;
    for (i = 0; i < n; i++) { x[i] = ox + (x[i] - x0) * scale; y[i] = oy + (y[i] - y0) * scale; }
    return {x: x, y: y};
  }
  function graphPage() {
    heading("Graph", "Entities, concept cards, events and context cards, linked by their references. Click a node to open its page.");
    return load("graph").then(function (g) {
      app.appendChild(h("p", {cls: "muted", text: "Showing " + fmt(g.nodes.length) + " of " + fmt(g.total_nodes) + " nodes (most connected first) and " + fmt(g.shown_edges) + " of " + fmt(g.total_edges) + " links."}));
      app.appendChild(h("div", {cls: "legend"}, ["entity", "concept", "event", "context"].map(function (k) {
        return h("span", null, h("i", {cls: "lg-" + k}), k);
      })));
      if (!g.nodes.length) { app.appendChild(h("p", {cls: "muted", text: "Nothing to draw yet."})); return; }
      var w = 1100, hgt = 640, pos = layout(g.nodes.length, g.edges, w, hgt);
      var svg = s("svg", {viewBox: "0 0 " + w + " " + hgt, role: "img", "aria-label": "graph of records"});
      g.edges.forEach(function (e) { svg.appendChild(s("line", {"class": "edge " + e[2], x1: pos.x[e[0]].toFixed(1), y1: pos.y[e[0]].toFixed(1), x2: pos.x[e[1]].toFixed(1), y2: pos.y[e[1]].toFixed(1)})); });
      var labelled = g.nodes.length <= 80 ? g.nodes.length : 30;
      g.nodes.forEach(function (node, i) {
        var a = s("a", {"class": "node k-" + node.kind, href: hashFor(routeOf(node.kind), node.id), "data-id": node.id});
        var title = s("title"); title.textContent = (node.label || node.id) + " (" + node.kind + ", " + node.degree + " links)";
        a.appendChild(title);
        a.appendChild(s("circle", {cx: pos.x[i].toFixed(1), cy: pos.y[i].toFixed(1), r: String(Math.min(14, 4 + Math.sqrt(node.degree) * 1.6))}));
        if (i < labelled) { var t = s("text", {x: (pos.x[i] + 7).toFixed(1), y: (pos.y[i] + 3).toFixed(1)}); t.textContent = node.label || node.id; a.appendChild(t); }
        svg.appendChild(a);
      });
      app.appendChild(h("div", {id: "graph-wrap"}, svg));
    });
  }

  // --- start ------------------------------------------------------------------------
  if (!D) {
    app.textContent = "";
    app.appendChild(h("h1", {text: "No dashboard data"}));
    app.appendChild(h("p", {cls: "notice bad", text: "There is no data beside this page (data/dashboard_data.js). Write it for your archive with: python3 scripts/open_dashboard.py"}));
    document.body.setAttribute("data-rendered", "nodata");
    return;
  }
  banner();
  window.addEventListener("hashchange", render);
  setInterval(function () { banner(); poll(); }, 30000);
  render();
}());
