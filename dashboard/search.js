/* Search over the words themselves: every capture's text, records' titles, summaries, claims and
 * expansions, entities' aliases, follow-up questions.
 *
 * The text comes in data/chunks/search-<n>.js ({docs, text}): each chunk is one string, a doc's
 * fields joined by U+001F and docs by U+001E. A query is split on white space only (so a CJK
 * query is one run of characters, matched as it is, with no word boundaries assumed); every part
 * must occur in a doc, case folded. The scan is String.indexOf over the whole chunk, jumping to
 * the next doc after a hit. A record also matches through the words it cites ("in its words")
 * and, for list filters, through the entities it is about.
 */
(function () {
  "use strict";

  var PU = window.PU, D = PU.D, h = PU.h, add = PU.add, fmt = PU.fmt;
  var FIELD = "\u001f", DOC = "\u001e", SHOW = 10, PAGE = 50;
  var state = {ready: null, chunks: [], linked: {}, counts: null};

  function foldSameLength(text) {
    // toLowerCase can lengthen a few characters (İ); keep every offset the same as in the original
    var out = [];
    for (var i = 0; i < text.length; i++) { var c = text[i], l = c.toLowerCase(); out.push(l.length === 1 ? l : c); }
    return out.join("");
  }
  // Full-width Latin letters, digits and signs (Ｆｅｎｇ, ２０２６) and the ideographic space match their
  // ASCII forms; one character for one, so offsets into the original stay valid.
  var WIDE = /[\uff01-\uff5e\u3000]/g;
  function narrow(c) { return c === "\u3000" ? " " : String.fromCharCode(c.charCodeAt(0) - 0xfee0); }
  // Traditional Chinese characters match their simplified forms (媽 finds 妈, and the reverse), as in recall:
  // data/chunks/fold-zh.js holds the pairs, traditional then simplified, one character for one (read with the
  // search chunks; until then characters stay as they are).
  var HAN = /[\u4e00-\u9fff]/g, ZH = {};
  function simplified(c) { return ZH[c] || c; }
  function readPairs(pairs) {
    for (var i = 0; i + 1 < (pairs || "").length; i += 2) { ZH[pairs[i]] = pairs[i + 1]; }
  }
  // A Latin letter with a diacritic matches its plain letter (Zoë finds Zoe, and the reverse), as in recall.
  var ACCENTED = /[\u00c0-\u024f]/g;
  function plain(c) { var b = c.normalize("NFD")[0]; return b !== c && /[a-z]/.test(b) ? b : c; }
  function fold(text) {
    var l = text.toLowerCase();
    l = l.length === text.length ? l : foldSameLength(text);
    return l.replace(WIDE, narrow).replace(ACCENTED, plain).replace(HAN, simplified);
  }
  function prepare(part) {
    var starts = [0], at = part.text.indexOf(DOC);
    while (at >= 0) { starts.push(at + 1); at = part.text.indexOf(DOC, at + 1); }
    starts.push(part.text.length + 1);
    return {docs: part.docs, text: part.text, lower: fold(part.text), starts: starts};
  }
  function ready() {
    if (state.ready) { return state.ready; }
    var t0 = performance.now(), n = (D.search && D.search.chunks) || 0, wait = [];
    for (var i = 0; i < n; i++) { wait.push(PU.load("search-" + i)); }
    var pairs = PU.load("fold-zh").then(readPairs, function () { return null; });  // an older build has none
    state.ready = pairs.then(function () { return Promise.all(wait); }).then(function (parts) {
      state.chunks = parts.map(prepare);
      var counts = {c: 0, r: 0, f: 0};
      state.chunks.forEach(function (c, ci) {
        c.docs.forEach(function (d, di) {
          counts[d[0]] += 1;
          if (d[0] === "r") { d[6].forEach(function (x) { (state.linked[x] = state.linked[x] || []).push([ci, di]); }); }
        });
      });
      state.counts = counts;
      state.loadMs = Math.round(performance.now() - t0);
    });
    return state.ready;
  }
  function termsOf(q) {
    var seen = {};
    return fold(q || "").split(/[\s\u3000]+/).filter(function (t) { if (!t || seen[t]) { return false; } seen[t] = 1; return true; });
  }
  function docAt(starts, pos) {
    var lo = 0, hi = starts.length - 2;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (starts[mid] <= pos) { lo = mid; } else { hi = mid - 1; } }
    return lo;
  }
  function scan(terms) {
    var found = [];
    state.chunks.forEach(function (c, ci) {
      var count = new Uint8Array(c.docs.length);
      terms.forEach(function (t, ti) {
        var at = c.lower.indexOf(t);
        while (at >= 0) {
          var d = docAt(c.starts, at);
          if (count[d] === ti) { count[d] = ti + 1; }
          at = c.lower.indexOf(t, c.starts[d + 1]);  // one hit per doc is enough
        }
      });
      for (var d = 0; d < count.length; d++) { if (count[d] === terms.length) { found.push([ci, d]); } }
    });
    return found;
  }
  function docOf(ref) { return state.chunks[ref[0]].docs[ref[1]]; }
  function bodyOf(ref) {
    var c = state.chunks[ref[0]];
    return {text: c.text.slice(c.starts[ref[1]], c.starts[ref[1] + 1] - 1), lower: c.lower.slice(c.starts[ref[1]], c.starts[ref[1] + 1] - 1)};
  }
  function isEntity(doc) { return doc[0] === "r" && (doc[2] === "entity" || doc[2] === "concept"); }

  // run(q) -> {terms, direct: [ref], words: [[ref, capture ref]], ids: Set of every id found or reached}
  function run(q) {
    var terms = termsOf(q), t0 = performance.now();
    var out = {q: q, terms: terms, direct: [], words: [], about: [], ids: new Set()};
    if (!terms.length) { return out; }
    out.direct = scan(terms);
    var byCapture = {}, seen = {};
    out.direct.forEach(function (ref) { var d = docOf(ref); out.ids.add(d[1]); seen[d[1]] = 1; if (d[0] === "c") { byCapture[d[1]] = ref; } });
    out.direct.forEach(function (ref) {
      var d = docOf(ref);
      if (d[0] !== "c" && !isEntity(d)) { return; }
      (state.linked[d[1]] || []).forEach(function (r) {
        var rec = docOf(r);
        if (seen[rec[1]]) { return; }
        seen[rec[1]] = 1;
        out.ids.add(rec[1]);
        if (d[0] === "c") { out.words.push([r, ref]); } else { out.about.push([r, ref]); }
      });
    });
    out.ms = performance.now() - t0;
    return out;
  }
  function ids(q) { return ready().then(function () { return run(q).ids; }); }

  // --- showing a match: a window of text around it with every part marked -----------
  function marked(text, terms) {
    var lower = fold(text), ranges = [];
    terms.forEach(function (t) { var at = lower.indexOf(t); while (at >= 0) { ranges.push([at, at + t.length]); at = lower.indexOf(t, at + t.length); } });
    ranges.sort(function (a, b) { return a[0] - b[0]; });
    var out = [], pos = 0;
    ranges.forEach(function (r) {
      if (r[0] < pos) { if (r[1] > pos) { out[out.length - 1].textContent += text.slice(pos, r[1]); pos = r[1]; } return; }
      if (r[0] > pos) { out.push(PU.txt(text.slice(pos, r[0]))); }
      out.push(h("mark", {text: text.slice(r[0], r[1])}));
      pos = r[1];
    });
    if (pos < text.length) { out.push(PU.txt(text.slice(pos))); }
    return out;
  }
  PU.marked = marked;
  function snippet(ref, terms, around) {
    var body = bodyOf(ref), doc = docOf(ref), best = -1;
    terms.forEach(function (t) { var at = body.lower.indexOf(t); if (at >= 0 && (best < 0 || at < best)) { best = at; } });
    if (best < 0) { best = 0; }
    var fieldStart = body.text.lastIndexOf(FIELD, best) + 1, fieldEnd = body.text.indexOf(FIELD, best);
    if (fieldEnd < 0) { fieldEnd = body.text.length; }
    var field = doc[5][body.text.slice(0, fieldStart).split(FIELD).length - 1];
    var from = Math.max(fieldStart, best - around), to = Math.min(fieldEnd, best + around * 2);
    var piece = (from > fieldStart ? "…" : "") + body.text.slice(from, to) + (to < fieldEnd ? "…" : "");
    return {field: field, nodes: marked(piece, terms)};
  }

  // --- the search page ------------------------------------------------------------
  var GROUPS = [["mine", "Your words"], ["others", "Other speakers' words"], ["records", "Records"],
    ["entities", "People, places and things"], ["followups", "Follow-ups"]];
  function groupOf(doc) {
    if (doc[0] === "c") { return doc[7] === "other" ? "others" : "mine"; }
    if (doc[0] === "f") { return "followups"; }
    return isEntity(doc) ? "entities" : "records";
  }
  function resultRow(item, terms, q) {
    var doc = docOf(item.ref), snip = snippet(item.via || item.ref, terms, 60), mark = "?q=" + encodeURIComponent(q);
    if (doc[0] === "c") {
      return h("li", {"data-id": doc[1]}, h("div", {cls: "row-head"}, PU.timeEl(doc[4], "said "), PU.badge(doc[3] || "user", doc[7] === "other" ? "role-other" : "role-user"),
        doc[2] === "attachment" ? PU.badge("attachment") : null), h("blockquote", {cls: "quote hit"}, snip.nodes),
        h("div", {cls: "id"}, PU.itemLink("capture", doc[1], doc[1], mark)));
    }
    if (doc[0] === "f") {
      return h("li", {"data-id": doc[1]}, h("div", {cls: "row-head"}, PU.itemLink("followup", doc[1], doc[3]), PU.badge(doc[2], "b-" + doc[2])),
        snip.field !== "question" ? h("div", {cls: "hit"}, h("span", {cls: "label", text: snip.field + ": "}), snip.nodes) : null);
    }
    var via = item.via ? docOf(item.via) : null;
    return h("li", {"data-id": doc[1]}, h("div", {cls: "row-head"}, PU.itemLink(PU.routeOf(doc[2]), doc[1], doc[3]), PU.badge(doc[2]),
      doc[7] && doc[7] !== "current" ? PU.statusBadge(doc[7]) : null, doc[4] ? h("span", {cls: "when", text: PU.localTime(doc[4])}) : null),
      via ? h("blockquote", {cls: "quote hit"}, snip.nodes, h("span", {cls: "src"}, "— in its words: ", PU.capLink(via[1]), " · ", PU.timeEl(via[4], "said ")))
        : (snip.field !== "title" ? h("div", {cls: "hit"}, h("span", {cls: "label", text: snip.field + ": "}), snip.nodes) : null));
  }
  function searchPage(_arg, params) {
    var q = (params.q || "").trim();
    PU.heading("Search", "Your words, the other speakers' words and everything derived from them. Matching ignores case and full-width forms (Ａ is A); " +
      "Chinese, Japanese and other text without spaces is matched as written. Separate words with spaces to require all of them.");
    var box = h("div", {id: "search-results"});
    PU.app.appendChild(box);
    if (!q) { box.appendChild(h("p", {cls: "muted", text: "Type in the search box above: a word, a name, an alias, a phrase."})); return null; }
    return ready().then(function () { show(box, q, params); });
  }
  function show(box, q, params) {
    var t0 = performance.now(), res = run(q), terms = res.terms, only = params["in"], page = Math.max(1, parseInt(params.page || "1", 10) || 1);
    var groups = {};
    GROUPS.forEach(function (g) { groups[g[0]] = []; });
    res.direct.forEach(function (ref) { groups[groupOf(docOf(ref))].push({ref: ref}); });
    res.words.forEach(function (pair) { groups.records.push({ref: pair[0], via: pair[1]}); });
    box.textContent = "";
    var c = state.counts, total = GROUPS.reduce(function (n, g) { return n + groups[g[0]].length; }, 0);
    if (!total) {
      box.appendChild(h("p", {cls: "notice nomatch", id: "search-count"}, "No match for “" + q + "”. Searched the words of " + fmt(c.c) + " captures, " +
        fmt(c.r) + " records and entities, and " + fmt(c.f) + " follow-ups" + (terms.length > 1 ? " for all of: " + terms.join(", ") : "") + "."));
    } else {
      box.appendChild(h("p", {id: "search-count", cls: "count"}, h("b", {text: fmt(total) + (total === 1 ? " result" : " results")}), " for “" + q + "”: ",
        GROUPS.filter(function (g) { return groups[g[0]].length; }).map(function (g, i) {
          var label = g[1].toLowerCase() + ": " + fmt(groups[g[0]].length);
          return [i ? " · " : "", only === g[0] ? h("b", {text: label}) : h("a", {href: "#" + PU.hashOf("search", "", {q: q, "in": g[0]}), text: label})];
        }), only ? [" · ", h("a", {href: "#" + PU.hashOf("search", "", {q: q}), text: "all"})] : null));
    }
    GROUPS.forEach(function (g) {
      var items = groups[g[0]];
      if (!items.length || (only && only !== g[0])) { return; }
      var from = only ? (page - 1) * PAGE : 0, shown = items.slice(from, from + (only ? PAGE : SHOW));
      box.appendChild(h("h2", {text: g[1] + " (" + fmt(items.length) + ")"}));
      box.appendChild(h("ol", {cls: "rows", "data-group": g[0]}, shown.map(function (it) { return resultRow(it, terms, q); })));
      if (!only && items.length > SHOW) {
        box.appendChild(h("p", null, h("a", {href: "#" + PU.hashOf("search", "", {q: q, "in": g[0]}), text: "all " + fmt(items.length) + " " + g[1].toLowerCase() + " ›"})));
      } else if (only && items.length > PAGE) {
        box.appendChild(PU.pager(page, Math.ceil(items.length / PAGE), params, "page"));
      }
    });
    box.setAttribute("data-search-ms", String(Math.round((performance.now() - t0) * 10) / 10));
    box.setAttribute("data-scan-ms", String(Math.round(res.ms * 10) / 10));
    box.setAttribute("data-load-ms", String(state.loadMs));
  }
  function retype(q) {  // the header box changed while the search page is open
    var box = document.getElementById("search-results");
    if (!box || !q) { return; }
    PU.replaceHash(PU.hashOf("search", "", {q: q}));
    ready().then(function () { show(box, q, {q: q}); });
  }

  PU.search = {ready: ready, run: run, ids: ids, retype: retype, terms: termsOf};
  PU.pages.search = searchPage;
}());
