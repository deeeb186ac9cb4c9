/* The list pages: overview, timeline, states, context, knowledge, hypotheses, follow-ups, sources
 * (captures and sessions) and diagnostics. */
(function () {
  "use strict";

  var PU = window.PU, D = PU.D, h = PU.h, add = PU.add, fmt = PU.fmt, badge = PU.badge, statusBadge = PU.statusBadge;
  var itemLink = PU.itemLink, hashFor = PU.hashFor;
  if (!D) { return; }

  // --- Overview ---------------------------------------------------------------------
  function countTable(obj) {
    return h("table", {cls: "kv"}, Object.keys(obj || {}).map(function (k) { return h("tr", null, h("th", {text: k}), h("td", {text: fmt(obj[k])})); }));
  }
  function overviewPage() {
    var o = D.overview, c = o.counts, v = o.validation, w = o.words, cards = h("div", {cls: "cards"});
    PU.heading("Overview", "What this archive holds and whether it is healthy. Follow the links for the items behind the numbers.");
    cards.appendChild(h("section", {cls: "card", id: "words"}, h("h2", {text: "Words"}),
      h("div", {cls: "big", id: "own-words", text: fmt(w.user.captures)}), h("div", {text: "of your own messages · " + fmt(w.user.chars) + " characters"}),
      w.other.captures ? h("div", {id: "other-words", text: fmt(w.other.captures) + " from other speakers · " + fmt(w.other.chars) + " characters"}) : null,
      w.attachments ? h("div", {text: fmt(w.attachments) + " attachment(s)"}) : null,
      w.withheld ? h("div", {cls: "bad", text: fmt(w.withheld) + " capture(s) withheld: their files no longer match their SHA-256"}) : null,
      h("a", {href: "#sources", text: "all sources"}), " · ", h("a", {href: "#sources?role=user", text: "only yours"})));
    cards.appendChild(h("section", {cls: "card", id: "validation"}, h("h2", {text: "Validation"}),
      h("div", {cls: "big status-" + v.status, id: "validation-status", text: v.status}),
      h("div", {text: fmt(v.errors) + " error(s), " + fmt(v.warnings) + " warning(s)"}),
      v.problems.length ? h("ul", {cls: "links"}, v.problems.slice(0, 8).map(function (p) { return h("li", {cls: p.severity === "error" ? "bad" : "warn", text: p.text}); })) : null,
      h("a", {href: "#diagnostics", text: v.total_problems ? "all " + fmt(v.total_problems) + " problem(s) in Diagnostics" : "Diagnostics"})));
    cards.appendChild(h("section", {cls: "card", id: "due"}, h("h2", {text: "Follow-ups due"}), h("div", {cls: o.due_total ? "big warn" : "big", text: fmt(o.due_total)}),
      o.due_followups.length ? h("ul", {cls: "links"}, o.due_followups.map(function (f) {
        return h("li", null, h("a", {href: hashFor("followup", f.id), text: f.question}), " ", lateness(f));
      })) : h("p", {cls: "muted", text: "Nothing due as of " + PU.localTime(D.generated_at) + "."}), h("a", {href: "#followups", text: "all follow-ups"})));
    cards.appendChild(h("section", {cls: "card"}, h("h2", {text: "Records"}), h("div", {cls: "big", text: fmt(c.records)}),
      c.redirected ? h("div", {cls: "muted", text: fmt(c.redirected) + " merged entity id(s) redirect to their canonical entity"}) : null,
      h("h3", {text: "by layer"}), countTable(c.by_layer), h("h3", {text: "by kind"}), countTable(c.by_kind)));
    var t = o.tiers || {};
    cards.appendChild(h("section", {cls: "card"}, h("h2", {text: "Captures"}), h("div", {cls: "big", text: fmt(c.captures)}),
      h("h3", {text: "by tier"}), h("table", {cls: "kv"}, ["short_term", "long_term", "archive"].map(function (k) {
        var x = t[k] || {captures: 0, chars: 0};
        return h("tr", null, h("th", {text: k.replace("_", "-")}), h("td", {text: fmt(x.captures) + " captures · " + fmt(x.chars) + " chars"}));
      })), h("div", {cls: "muted", text: fmt(t.bytes_on_disk) + " bytes on disk"}), h("h3", {text: "by ledger status"}), countTable(c.by_capture_status),
      c.sessions ? h("a", {href: "#sessions", text: fmt(c.sessions) + " session(s)"}) : null));
    var b = o.backup;
    cards.appendChild(h("section", {cls: "card", id: "backup"}, h("h2", {text: "Last backup"}),
      b.never ? h("div", {cls: "big bad", text: "never"}) : [h("div", {cls: "big", text: PU.age(b.last_backup_at)}), h("div", {cls: "muted", text: PU.localTime(b.last_backup_at)})]));
    cards.appendChild(h("section", {cls: "card"}, h("h2", {text: "Summary debt"}), h("div", {cls: o.summary_debt ? "big warn" : "big", text: fmt(o.summary_debt)}),
      h("p", {cls: "muted", text: "records resting on summaries without the user's words"}), h("a", {href: "#diagnostics", text: "list in Diagnostics"})));
    var pc = o.pending_captures;
    cards.appendChild(h("section", {cls: "card", id: "pending"}, h("h2", {text: "Pending captures"}), h("div", {cls: pc.total ? "big warn" : "big", text: fmt(pc.total)}),
      pc.items.length ? h("ul", {cls: "links"}, pc.items.map(function (p) { return h("li", null, h("a", {href: hashFor("capture", p.id), cls: "mono", text: p.id})); })) :
        h("p", {cls: "muted", text: "Every capture is derived or closed with a reason."})));
    PU.app.appendChild(cards);
  }

  // --- Timeline: date order; phases are bands, undated items their own section ------------
  function timelineFilters(f) {
    return [{key: "kind", label: "kind", options: f.kinds}, {key: "phase", label: "phase", options: f.phases},
      {key: "domain", label: "domain", options: f.domains},
      {key: "salience", label: "salience at least", options: [["1", "1 supporting"], ["2", "2 key"], ["3", "3 pivotal"]]},
      {key: "from", label: "from (YYYY[-MM[-DD]])", placeholder: "2019"}, {key: "to", label: "to", placeholder: "2021-06"},
      {key: "q", label: "words", placeholder: "any words"}, {key: "hide", label: "hide superseded", check: "superseded"}];
  }
  function timelineMatch(r, p, hit) {
    if (p.kind && r.kind !== p.kind) { return false; }
    if (p.hide === "superseded" && r.status === "superseded") { return false; }
    if (p.salience && (r.salience || 0) < Number(p.salience)) { return false; }
    if (p.domain && r.domain !== p.domain) { return false; }
    if (p.phase && r.phase !== p.phase) { return false; }
    if ((p.from || p.to) && !r.date_start) { return false; }
    if (p.to && !PU.upTo(r.date_start, p.to)) { return false; }
    if (p.from && !PU.upTo(p.from, r.date_end || r.date_start)) { return false; }
    return hit(r.id);
  }
  function timelineRow(r, prev, band) {
    var out = [];
    if (band && (!prev || (prev.phase || "") !== (r.phase || ""))) {
      out.push(h("li", {cls: "band", text: r.phase ? "phase: " + r.phase : "no phase given"}));
    }
    var more = h("div", {cls: "exp"}, h("span", {cls: "muted", text: "loading…"}));
    var det = h("details", {cls: "expand"}, h("summary", {text: "expansion and quotes"}), more);
    det.addEventListener("toggle", function () {
      if (!det.open || det.getAttribute("data-loaded")) { return; }
      det.setAttribute("data-loaded", "1");
      PU.getItem("rec", r.id).then(function (rec) {
        more.textContent = "";
        if (!rec) { add(more, h("span", {cls: "missing", text: "not in this data"})); return; }
        add(more, [PU.expansion(rec) || h("p", {cls: "muted", text: "No expansion recorded."}), PU.quotesOf(rec)]);
      });
    });
    out.push(h("li", {id: "row-" + r.id, "data-id": r.id, "data-date": r.date_start || "", cls: r.status === "superseded" ? "superseded" : null},
      h("div", {cls: "row-head"}, h("span", {cls: "when date", text: PU.dates(r)}), itemLink("record", r.id, r.title), badge(r.kind, "kind-" + r.kind),
        PU.stars(r.salience), badge(r.domain), r.phase && !band ? badge(r.phase, "phase") : null, r.status !== "current" ? statusBadge(r.status) : null,
        r.fidelity === "summary_only" ? badge("summary only", "st-uncertain") : null),
      PU.rowQuote(r.quote), r.said ? h("div", {cls: "muted small"}, PU.timeEl(r.said, "said ")) : null, det));
    return out;
  }
  function timelinePage(_arg, params) {
    var f = D.filters.timeline;
    PU.heading("Timeline", "Your life in date order: events, states and decisions by when they happened, the earliest first. " +
      "Phases show as bands; items without a date are listed apart at the end.");
    var filters = timelineFilters(f);
    var dated = PU.mount(PU.listView({name: "timeline", params: params, filters: filters, match: timelineMatch, noun: "dated items",
      empty: "No dated events, states or decisions yet.", renderRow: function (r, prev) { return timelineRow(r, prev, f.phases.length > 0); }}));
    var m = PU.listMeta("undated");
    PU.app.appendChild(h("h2", {id: "undated", text: "Undated: no date given (" + fmt(m.total) + ")"}));
    PU.app.appendChild(h("p", {cls: "muted", text: "Things whose time is not known, in the order they were said."}));
    var undated = PU.mount(PU.listView({name: "undated", params: params, pageKey: "upage", filters: filters, hideBar: true, noun: "undated items",
      match: timelineMatch, empty: "None: everything has a date.", renderRow: function (r) { return timelineRow(r, null, false); }}));
    return Promise.all([dated, undated]);
  }

  // --- States: every subject with all its versions ------------------------------------
  function subjectsPage(_arg, params) {
    PU.heading("States", "What is true now and what it replaced: each subject (a job, a home, a plan) with the number of versions. " +
      "Open one for every version in the order it was said.");
    return PU.mount(PU.listView({name: "subjects", params: params, noun: "subjects",
      filters: [{key: "kind", label: "kind", options: ["state", "decision"]}, {key: "q", label: "words"}],
      match: function (r, p, hit) { return (!p.kind || r.kind === p.kind) && hit(r.id); }, empty: "No states or decisions yet.",
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("record", r.id, r.title), badge(r.kind, "kind-" + r.kind),
          r.status !== "current" ? statusBadge(r.status) : null, badge(r.subject_key, "subject"),
          h("span", {cls: "muted", text: r.versions === 1 ? "1 version" : fmt(r.versions) + " versions"})),
          h("div", {cls: "muted small"}, PU.timeEl(r.said, "latest said "), r.versions > 1 ? [" · ", PU.timeEl(r.first_said, "first said ")] : null));
      }}));
  }

  // --- Context cards and facets -----------------------------------------------------
  function entityChip(e) { return e[2] ? h("a", {href: hashFor("entity", e[0]), text: e[1] || e[0]}) : h("span", {cls: "missing", text: e[0] + " (missing)"}); }
  function contextPage(_arg, params) {
    PU.heading("Context cards", "Cards that tie entities sharing stories, and facets derived from co-occurrence in at least two events (never a cause).");
    var cards = PU.mount(PU.listView({
      name: "context", params: params, empty: "No context cards yet.",
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("record", r.id, r.title), statusBadge(r.status !== "current" ? r.status : null)),
          r.summary ? h("p", {cls: "summary", text: r.summary}) : null,
          r.entities.length ? h("div", {cls: "muted"}, "ties: ", r.entities.map(function (e, i) { return [i ? " · " : "", entityChip(e)]; })) : null);
      }
    }));
    PU.app.appendChild(h("h2", {text: "Derived facets (co-occurrence)"}));
    var facets = PU.mount(PU.listView({
      name: "facets", params: params, pageKey: "fpage", empty: "No two entities share two events yet.",
      renderRow: function (r) {
        return h("li", {"data-id": r.id}, h("div", {cls: "row-head"}, itemLink("facet", r.id, (r.entities[0][1] || r.entities[0][0]) + " × " + (r.entities[1][1] || r.entities[1][0])),
          h("span", {cls: "muted", text: fmt(r.events) + " shared events"})));
      }
    }));
    return Promise.all([cards, facets]);
  }
  function facetRoute(id) {
    return PU.listAll("facets").then(function (rows) {
      var f = rows.filter(function (r) { return r.id === id; })[0];
      if (!f) { PU.notFound("Facet", id); return; }
      PU.heading("Facet: " + (f.entities[0][1] || f.entities[0][0]) + " × " + (f.entities[1][1] || f.entities[1][0]), "These entities appear together in " + f.events + " events. Co-occurrence, not a cause.");
      PU.app.appendChild(h("p", null, entityChip(f.entities[0]), " · ", entityChip(f.entities[1])));
      PU.app.appendChild(h("ul", {cls: "links"}, f.event_ids.map(function (e) { return h("li", null, h("a", {href: hashFor("record", e), text: f.event_titles[e] || e})); })));
    });
  }

  // --- Knowledge and hypotheses --------------------------------------------------------
  function knowledgePage(_arg, params) {
    PU.heading("Knowledge", "Facts, preferences, rules, models, values, heuristics, fragments and concept cards.");
    return PU.mount(PU.listView({
      name: "knowledge", params: params, noun: "cards",
      filters: [{key: "kind", label: "kind", options: D.filters.knowledge.kinds}, {key: "q", label: "words"}],
      match: function (r, p, hit) { return (!p.kind || r.kind === p.kind) && hit(r.id); },
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
    PU.heading("Hypotheses", "The model's guesses, kept apart from facts: candidates, confirmed and rejected, with their evidence.");
    return PU.mount(PU.listView({
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

  // --- Follow-ups: overdue says so, with the days late and the words ------------------
  var BUCKETS = {overdue: "Overdue", due: "Due today", upcoming: "Upcoming (next 3 days)", later: "Later", undated: "Undated (never due)", closed: "Closed"};
  function lateness(f) {
    if (f.bucket === "overdue") { return h("span", {cls: "overdue", text: "overdue by " + fmt(f.days_late) + (f.days_late === 1 ? " day" : " days") + " (due " + (f.due_at || "").slice(0, 10) + ")"}); }
    if (f.bucket === "due") { return h("span", {cls: "due-today", text: "due today"}); }
    return f.due_at ? h("span", {cls: "when", text: "due " + f.due_at.slice(0, 10)}) : null;
  }
  function followupsPage(_arg, params) {
    PU.heading("Follow-ups", "Things to ask about later, each with the words that raised it. Due status as of " + PU.localTime(D.generated_at) + ".");
    return PU.mount(PU.listView({
      name: "followups", params: params, empty: "No follow-ups.",
      filters: [{key: "bucket", label: "show", options: Object.keys(BUCKETS).map(function (k) { return [k, BUCKETS[k]]; })}],
      match: function (r, p) { return !p.bucket || r.bucket === p.bucket; },
      renderRow: function (r, prev) {
        var out = [];
        if (!prev || prev.bucket !== r.bucket) { out.push(h("li", {cls: "group", text: BUCKETS[r.bucket]})); }
        out.push(h("li", {"data-id": r.id, cls: "b-" + r.bucket}, h("div", {cls: "row-head"}, itemLink("followup", r.id, r.question), badge(BUCKETS[r.bucket], "b-" + r.bucket),
          lateness(r), r.resolution ? badge(r.resolution) : null),
          r.words ? PU.quoteBlock({capture_id: r.capture_id, quote: r.words, said: r.said}, null) : null,
          r.note ? h("div", {cls: "muted", text: "resolution: " + r.note}) : null));
        return out;
      }
    }));
  }
  function followupRoute(id) {
    return PU.getItem("fu", id).then(function (f) {
      if (!f) { PU.notFound("Follow-up", id); return; }
      PU.heading(f.question);
      PU.app.appendChild(h("p", {cls: "id", text: f.id}));
      PU.app.appendChild(h("p", null, badge(BUCKETS[f.bucket], "b-" + f.bucket), " ", lateness(f)));
      var capRefs = {};
      capRefs[f.capture_id] = f.capture_exists ? {} : null;
      if (f.words) { PU.app.appendChild(h("h2", {text: "The words that raised it"})); PU.app.appendChild(PU.quoteBlock({capture_id: f.capture_id, quote: f.words, said: f.said}, capRefs)); }
      PU.app.appendChild(PU.kv([["state", BUCKETS[f.bucket]], ["status", f.status], ["due", f.due_at], ["due rule", f.due_rule], ["context", f.context],
        ["expectation", f.expectation], ["said", f.said ? PU.localTime(f.said) : null], ["source", f.capture_id ? PU.capLink(f.capture_id, capRefs) : "none (FOLLOWUP_NO_SOURCE)"],
        ["created", PU.localTime(f.created_at)], ["last checked", PU.localTime(f.last_checked_at)]]));
      if (f.resolution) {
        PU.app.appendChild(h("h2", {text: "Resolution"}));
        PU.app.appendChild(PU.kv([["channel", f.resolution.channel], ["note", f.resolution.note], ["at", PU.localTime(f.resolution.at)],
          ["answer", f.resolution.capture_id ? h("a", {href: hashFor("capture", f.resolution.capture_id), cls: "mono", text: f.resolution.capture_id}) : null]]));
      }
    });
  }

  // --- Diagnostics ------------------------------------------------------------------
  function rl(id, title) { return h("a", {href: hashFor("record", id), text: title || id}); }
  function section(bounded, emptyText, heads, cells) {
    if (!bounded.total) { PU.app.appendChild(h("p", {cls: "muted", text: emptyText})); return; }
    if (bounded.total > bounded.items.length) { PU.app.appendChild(h("p", {cls: "muted", text: "showing " + fmt(bounded.items.length) + " of " + fmt(bounded.total)})); }
    PU.app.appendChild(h("div", {cls: "scroll-x"}, h("table", {cls: "grid"}, h("tr", null, heads.map(function (x) { return h("th", {text: x}); })),
      bounded.items.map(function (r) { return h("tr", null, cells(r).map(function (c) { return h("td", null, c && c.nodeType ? c : PU.txt(c)); })); }))));
  }
  function diagnosticsPage() {
    PU.heading("Diagnostics", "Where the files are, what validation found, and the gaps worth a look.");
    return PU.load("diagnostics").then(function (g) {
      var v = g.validation, app = PU.app;
      app.appendChild(h("h2", {text: "Validation"}));
      app.appendChild(h("p", null, h("span", {cls: "big status-" + v.status, id: "diag-status", text: v.status}), " ",
        fmt(v.errors) + " error(s), " + fmt(v.warnings) + " warning(s); checked " + fmt(v.checked.captures) + " captures, " + fmt(v.checked.records) + " records, " + fmt(v.checked.receipts) + " receipts"));
      section(v.problems, "No problems.", ["severity", "code", "where", "message"], function (p) {
        return [p.severity, p.code, h("code", {text: (p.path || "") + (p.line ? ":" + p.line : "")}), p.message];
      });
      app.appendChild(h("h2", {text: "Words withheld"}));
      section(g.withheld_words, "None: every capture's words match their SHA-256.", ["capture", "why", "file"], function (r) {
        return [h("a", {href: hashFor("capture", r.id), cls: "mono", text: r.id}), r.code, h("code", {text: r.path})];
      });
      app.appendChild(h("h2", {text: "Files"}));
      app.appendChild(PU.kv(g.paths.dirs.map(function (d) { return [d[0], h("code", {text: d[1]})]; })));
      app.appendChild(h("div", {cls: "scroll-x"}, h("table", {cls: "grid"}, h("tr", null, h("th", {text: "file"}), h("th", {text: "bytes"})),
        g.paths.files.map(function (f) { return h("tr", null, h("td", null, h("code", {text: f.path})), h("td", {text: f.bytes === null ? "absent" : fmt(f.bytes)})); }))));
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

  Object.assign(PU.pages, {overview: overviewPage, timeline: timelinePage, states: subjectsPage, context: contextPage, facet: facetRoute,
    knowledge: knowledgePage, hypotheses: hypothesesPage, followups: followupsPage, followup: followupRoute, diagnostics: diagnosticsPage});
  Object.assign(PU.nav, {facet: "context", followup: "followups"});
}());
