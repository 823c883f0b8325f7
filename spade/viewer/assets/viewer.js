// spade report viewer: draws the page data embedded as JSON. Every text from the data goes
// into the page through text nodes (textContent), never as markup.
"use strict";
(() => {
  const DATA = JSON.parse(document.getElementById("spade-data").textContent);
  const S = DATA.S;
  const PAGE_SIZE = 50;
  const app = document.getElementById("app");

  // --- DOM helpers -------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (typeof value === "function") node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const text = (index) => (index === null || index === undefined ? "" : S[index]);
  function fmt(x) {
    if (x === null || x === undefined || x === "") return "—";
    if (typeof x !== "number") return String(x);
    if (Number.isInteger(x)) return String(x);
    return Math.abs(x) >= 100 ? x.toFixed(1) : x.toFixed(3);
  }
  // Scores, rates and rewards: always three decimals, so 1 and 0.5 line up with 0.667.
  const val = (x) => (typeof x === "number" && Math.abs(x) < 100 ? x.toFixed(3) : fmt(x));
  const ci = (pair) => (pair && pair.length === 2 ? `[${val(pair[0])}, ${val(pair[1])}]` : "—");
  const signed = (x) => (typeof x === "number" ? (x > 0 ? "+" : "") + val(x) : "—");
  function facts(pairs) {  // a grid of name/value pairs; long values take a wider cell
    const width = (value) => (value.length > 60 ? "full" : value.length > 24 ? "wide" : null);
    return el("dl", { class: "facts" }, pairs.map(([name, value]) =>
      el("div", { class: width(String(value)) }, el("dt", {}, name), el("dd", {}, value))));
  }

  // --- state in the URL fragment: #tab=...&q=...&f=...&open=... ------------------------------
  const state = Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
  function saveState(patch) {
    Object.assign(state, patch);
    for (const key of Object.keys(state)) if (state[key] === "" || state[key] === null) delete state[key];
    history.replaceState(null, "", "#" + new URLSearchParams(state).toString());
  }

  // --- detail sections -----------------------------------------------------------------------
  function pre(value, cls) {
    return el("pre", { class: cls || "text" }, value);
  }
  function codeBlock(value) {
    const lines = value.replace(/\n$/, "").split("\n");
    return el("pre", { class: "code" }, lines.map((line) => el("span", { class: "line" }, line + "\n")));
  }
  function message(m) {
    const head = el("div", { class: "msg-head" }, el("span", { class: "role" }, m.r),
      m.n !== undefined ? el("span", { class: "name" }, text(m.n)) : null,
      m.s !== undefined ? el("span", { class: "step" }, `step ${m.s}`) : null,
      m.w !== undefined ? el("span", { class: "reward" }, `reward ${val(m.w)}`) : null);
    return el("div", { class: `msg role-${/^[a-z_]+$/.test(m.r) ? m.r : "other"}` }, head,
      m.t !== undefined ? pre(text(m.t)) : null,
      (m.c || []).map((call) => el("div", { class: "call" }, el("span", { class: "arrow" }, "call "), text(call))),
      m.x !== undefined ? el("details", {}, el("summary", {}, "more"), pre(text(m.x), "json")) : null);
  }
  function chat(section) {
    const box = el("div", { class: "chat" });
    const messages = section.m;
    const hidden = section.t === "Prompt" && messages.length > 4 ? messages.length - 2 : 0;
    if (hidden) {
      const more = el("button", { class: "more", type: "button", onclick: () => {
        more.replaceWith(...messages.slice(0, hidden).map(message));
      } }, `show ${hidden} earlier messages`);
      box.append(more);
    }
    box.append(...messages.slice(hidden).map(message));
    return box;
  }
  function section(s) {
    let body;
    if (s.k === "chat") body = chat(s);
    else if (s.k === "code") body = codeBlock(text(s.v));
    else if (s.k === "json") body = pre(text(s.v), "json");
    else if (s.k === "list") body = el("ol", { class: "items" }, s.v.map((i) => el("li", {}, pre(text(i)))));
    else if (s.k === "fields") body = facts(s.v.map(([k, v]) => [k, text(v)]));
    else body = pre(text(s.v));
    return el("details", { class: `section kind-${s.k}`, open: s.t !== "Extra" },
      el("summary", {}, s.t), body);
  }
  const sections = (list) => el("div", { class: "sections" }, list.map(section));

  function showDetail(holder, title, columns) {
    const close = el("button", { class: "close", type: "button", onclick: () => {
      holder.replaceChildren();
      saveState({ open: "" });
    } }, "close");
    holder.replaceChildren(el("div", { class: "detail" },
      el("div", { class: "detail-head" }, el("h3", {}, title), close),
      el("div", { class: columns.length > 1 ? "side-by-side" : "single" },
        columns.map(([label, list]) => el("div", { class: "column" },
          label ? el("h4", {}, label) : null, sections(list))))));
    holder.scrollIntoView({ block: "start" });
  }

  // --- a filterable, sortable, paginated table ----------------------------------------------
  // columns: [{title, value(row), cls}]; filters: [{name, label, options: [[value, label]],
  // test(row, value)}]; search(row): text the query matches; key(row, index): for the URL.
  function dataTable(opts) {
    const rows = opts.rows;
    const searchCache = new Array(rows.length);
    const searchText = (i) => (searchCache[i] ??= opts.search(rows[i]).toLowerCase());
    let shown = [], page = 0, sortBy = null, sortDir = 1;
    const query = el("input", { type: "search", class: "query", placeholder: opts.placeholder || "filter…",
      "aria-label": "filter rows" });
    query.value = state.q || "";
    const selects = (opts.filters || []).map((f) => {
      const select = el("select", { class: `filter filter-${f.name}`, "aria-label": f.label },
        f.options.map(([value, label]) => el("option", { value }, label)));
      if (state[f.name] && f.options.some(([v]) => v === state[f.name])) select.value = state[f.name];
      select.addEventListener("change", () => { saveState({ [f.name]: select.value }); apply(); });
      return select;
    });
    const count = el("span", { class: "count" });
    const tbody = el("tbody");
    const pager = el("div", { class: "pager" });
    const head = el("tr", {}, el("th", { class: "num" }, "#"), opts.columns.map((c, ci) => el("th", {
      class: "sortable " + (c.cls || ""), title: "sort", onclick: () => {
        sortDir = sortBy === ci ? -sortDir : 1;
        sortBy = ci;
        apply(true);
      } }, c.title)));
    let timer = null;
    query.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { saveState({ q: query.value }); apply(); }, 80);
    });
    function apply(keepPage) {
      const needle = query.value.trim().toLowerCase();
      shown = [];
      for (let i = 0; i < rows.length; i++) {
        if (needle && !searchText(i).includes(needle)) continue;
        if (!(opts.filters || []).every((f, n) => f.test(rows[i], selects[n].value))) continue;
        shown.push(i);
      }
      if (sortBy !== null) {
        const value = opts.columns[sortBy].value;
        shown.sort((a, b) => {
          const x = value(rows[a]), y = value(rows[b]);
          if (x === y) return a - b;
          if (x === null || x === undefined) return 1;
          if (y === null || y === undefined) return -1;
          return (x < y ? -1 : 1) * sortDir;
        });
      }
      if (!keepPage) page = 0;
      draw();
    }
    function draw() {
      const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
      page = Math.min(page, pages - 1);
      const slice = shown.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
      tbody.replaceChildren(...slice.map((i) => el("tr", {
        class: "row", tabindex: 0, "data-index": i,
        onclick: () => opts.open(i), onkeydown: (e) => { if (e.key === "Enter") opts.open(i); },
      }, el("td", { class: "num" }, i + 1), opts.columns.map((c) => {
        const v = c.value(rows[i]);
        return el("td", { class: c.cls || "" }, c.show ? c.show(v, rows[i]) : (c.cls || "").includes("score") ? val(v) : fmt(v));
      }))));
      count.textContent = `${shown.length} of ${rows.length} ${opts.noun || "rows"}`;
      const prev = el("button", { type: "button", class: "prev", disabled: page === 0,
        onclick: () => { page--; draw(); } }, "‹ prev");
      const next = el("button", { type: "button", class: "next", disabled: page >= pages - 1,
        onclick: () => { page++; draw(); } }, "next ›");
      pager.replaceChildren(prev, el("span", { class: "page" }, `page ${page + 1} of ${pages}`), next);
    }
    apply();
    return el("div", { class: "data-table" },
      el("div", { class: "controls" }, query, selects, count),
      el("table", { class: "rows" }, el("thead", {}, head), tbody), pager);
  }

  // --- charts --------------------------------------------------------------------------------
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    node.append(...children);
    return node;
  }
  // domain: [first, last] iteration, shared by a page's charts so they line up. lines:
  // [{points: [[x, y], ...], cls, name}], drawn in one frame; cls (arm-K) gives a line its colour.
  function multiChart(title, lines, domain, size) {
    const [W, H] = size || [200, 140], L = 40, R = 8, T = 8, B = 26;
    const box = el("figure", { class: "chart" }, el("figcaption", { title }, title));
    lines = (lines || []).filter((line) => line.points && line.points.length);
    if (!lines.length) {
      box.append(el("div", { class: "empty" }, "no finite values"));
      return box;
    }
    const xs = lines.flatMap((l) => l.points.map((p) => p[0])), ys = lines.flatMap((l) => l.points.map((p) => p[1]));
    // The y axis starts at 0 unless values go below it, as a rate or a return is read from 0.
    const [first, last] = domain || [Math.min(...xs), Math.max(...xs)];
    const [x0, x1] = first === last ? [first - 1, last + 1] : [first, last];
    let [y0, y1] = [Math.min(0, ...ys), Math.max(...ys)];
    if (y0 === y1) y1 = y0 + 1;
    const X = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
    const Y = (y) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
    const label = (x, y, value, anchor) => svg("text", { x, y, "text-anchor": anchor, class: "tick" }, value);
    const radius = lines.length > 1 ? 2.5 : 3.5;
    const drawn = lines.flatMap((line) => [
      svg("polyline", { points: line.points.map((p) => `${X(p[0])},${Y(p[1])}`).join(" "),
        class: `series ${line.cls || ""}` }),
      ...line.points.map((p) => svg("circle", { cx: X(p[0]), cy: Y(p[1]), r: radius, class: `point ${line.cls || ""}` },
        svg("title", {}, `${line.name ? line.name + " · " : ""}iteration ${p[0]}: ${val(p[1])}`)))]);
    box.append(svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" },
      svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }),
      svg("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }),
      label(L - 4, Y(y1) + 4, val(y1), "end"), label(L - 4, Y(y0) + 4, val(y0), "end"),
      label(X(first), H - 12, fmt(first), "middle"),
      last !== first ? label(X(last), H - 12, fmt(last), "middle") : "",
      label((L + W - R) / 2, H - 1, "iteration", "middle"), ...drawn));
    return box;
  }
  const chart = (title, points, domain) => multiChart(title, [{ points }], domain);

  // --- results pages -------------------------------------------------------------------------
  function headerBlock(title, subtitle) {
    return el("header", {}, el("h1", {}, title), subtitle ? el("div", { class: "sub" }, subtitle) : null);
  }
  function scoreFilter(compare) {
    const options = [["all", "all scores"], ["full", "score = 1"], ["partial", "0 < score < 1"],
      ["zero", "score = 0"], ["unparsed", "parse failures"]];
    if (compare) options.push(["changed", "changed vs other run"], ["up", "better than other"],
      ["down", "worse than other"]);
    return { name: "f", label: "score filter", options, test: (row, value) => {
      const s = row[1];
      if (value === "full") return s === 1;
      if (value === "partial") return s !== null && s > 0 && s < 1;
      if (value === "zero") return s === 0;
      if (value === "unparsed") return !row[4];
      if (value === "changed" || value === "up" || value === "down") {
        const c = compare.byId.get(row[0]);
        if (!c) return false;
        return value === "changed" || (value === "up" ? c[1] > c[2] : c[1] < c[2]);
      }
      return true;
    } };
  }
  function sampleColumns(bench, compare) {
    const columns = [
      { title: "sample id", value: (r) => r[0], cls: "id" },
      { title: `score (${bench.primary})`, value: (r) => r[1], cls: "score" },
      { title: "extracted answer", value: (r) => r[2], cls: "clip" },
      { title: "target", value: (r) => r[3], cls: "clip" },
      { title: "parsed", value: (r) => r[4], show: (v) => (v ? "yes" : "no"), cls: "flag" },
    ];
    if (compare) columns.splice(2, 0, { title: "other run", cls: "score", value: (r) => {
      const c = compare.byId.get(r[0]);
      return c ? c[2] : null;
    } });
    return columns;
  }
  function openSample(bench, index, holder) {
    const row = bench.rows[index];
    const changed = bench.compare ? bench.compare.byId.get(row[0]) : null;
    const columns = [[changed ? "this run" : "", bench.details[index]]];
    if (changed) columns.push(["other run", bench.compare.details[changed[4]]]);
    showDetail(holder, `${bench.name} · ${row[0]}`, columns);
    saveState({ open: row[0] });
  }
  function benchmarkTab(bench) {
    const compare = bench.compare || null;
    if (compare) compare.byId = new Map(compare.rows.map((r) => [r[0], r]));
    const holder = el("div", { class: "detail-holder" });
    const known = [["primary metric", bench.primary], ["value", val(bench.value)], ["95% CI", ci(bench.ci)],
      ["n", fmt(bench.n)], ["parse failures", fmt(bench.parse_failures)], ["version", fmt(bench.version)],
      ["seconds", fmt(bench.seconds)]];
    if (compare) known.push(["other run", `${val(compare.other_value)} ${ci(compare.other_ci)}`],
      ["Δ (this − other)", compare.delta ? `${signed(compare.delta.value)} ${ci(compare.delta.ci)}` : "—"]);
    const table = dataTable({
      rows: bench.rows, noun: "samples", columns: sampleColumns(bench, compare),
      filters: [scoreFilter(compare)], placeholder: "filter by id, answer, target or output…",
      search: (r) => `${r[0]}\n${r[2]}\n${r[3]}\n${text(r[5])}`,
      open: (i) => openSample(bench, i, holder),
    });
    const found = state.open ? bench.rows.findIndex((r) => r[0] === state.open) : -1;
    if (found >= 0) queueMicrotask(() => openSample(bench, found, holder));
    return el("section", { class: "tab-body" }, el("h2", {}, bench.name),
      bench.summary ? null : el("p", { class: "note" }, "No summary for this benchmark in results.json."),
      facts(known),
      el("details", { class: "metrics" }, el("summary", {}, `all metrics (${bench.metrics.length})`),
        metricsTable(bench.metrics)),
      el("details", {}, el("summary", {}, "generation settings and data hashes"), pre(text(bench.settings), "json")),
      bench.rows.length ? table : el("p", { class: "note" }, "No per-sample records (samples/*.jsonl)."),
      holder);
  }
  function metricsTable(metrics) {
    return el("table", { class: "metric-list" }, el("tr", {}, el("th", {}, "metric"), el("th", {}, "value"),
      el("th", {}, "95% CI")), metrics.map(([name, value, lo, hi]) =>
      el("tr", {}, el("td", {}, name), el("td", { class: "score" }, val(value)), el("td", {}, ci([lo, hi])))));
  }
  function resultsSummary(go) {
    const compare = Boolean(DATA.other);
    const head = ["benchmark", "version", "n", "primary metric", "value", "95% CI", "parse failures", "seconds"];
    if (compare) head.push("other run", "Δ (this − other)", "Δ 95% CI", "better", "worse");
    const rows = DATA.benchmarks.map((b) => {
      const c = b.compare;
      const cells = [el("a", { href: "#", class: "bench-link", onclick: (e) => { e.preventDefault(); go(b.name); } }, b.name),
        fmt(b.version), fmt(b.n), b.primary, val(b.value), ci(b.ci), fmt(b.parse_failures), fmt(b.seconds)];
      if (compare) cells.push(c ? val(c.other_value) : "not in other run", c && c.delta ? signed(c.delta.value) : "—",
        c && c.delta ? ci(c.delta.ci) : "—", c ? fmt(c.up) : "—", c ? fmt(c.down) : "—");
      return el("tr", {}, cells.map((cell) => el("td", {}, cell)));
    });
    return el("section", { class: "tab-body" }, el("h2", {}, "Summary"),
      el("table", { class: "summary" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)),
      el("h3", {}, "Checkpoint"), facts(DATA.checkpoint),
      compare ? [el("h3", {}, "Compared with"), facts([["results dir", DATA.other.path], ...DATA.other.checkpoint]),
        DATA.other.only_there.length ? el("p", { class: "note" },
          `Only in the other run: ${DATA.other.only_there.join(", ")}`) : null] : null);
  }
  function changesTab() {
    const holder = el("div", { class: "detail-holder" });
    const parts = DATA.benchmarks.filter((b) => b.compare).map((bench) => {
      const c = bench.compare;
      const table = dataTable({
        rows: c.rows, noun: "changed samples",
        columns: [{ title: "sample id", value: (r) => r[0], cls: "id" },
          { title: "this run", value: (r) => r[1], cls: "score" },
          { title: "other run", value: (r) => r[2], cls: "score" },
          { title: "Δ", value: (r) => r[1] - r[2], show: signed, cls: "score delta" }],
        filters: [{ name: `dir-${bench.name}`, label: "direction", options: [["all", "up and down"],
          ["up", "better in this run"], ["down", "worse in this run"]],
          test: (r, v) => v === "all" || (v === "up" ? r[1] > r[2] : r[1] < r[2]) }],
        search: (r) => r[0],
        open: (i) => {
          const r = c.rows[i];
          showDetail(holder, `${bench.name} · ${r[0]}`, [["this run", bench.details[r[3]]],
            ["other run", c.details[r[4]]]]);
        },
      });
      return el("div", { class: "change-block" }, el("h3", {}, bench.name),
        el("p", {}, `${c.up} better, ${c.down} worse, ${c.same} unchanged; ${c.only_here} only in this run, ` +
          `${c.only_there} only in the other; Δ = ${c.delta ? signed(c.delta.value) + " " + ci(c.delta.ci) +
          ` (p = ${val(c.delta.p)}, ${c.delta.method})` : "—"}`),
        c.rows.length ? table : el("p", { class: "note" }, "No sample changed score."));
    });
    return el("section", { class: "tab-body" }, el("h2", {}, "Samples whose score changed"), parts, holder);
  }

  // --- training run pages --------------------------------------------------------------------
  function runSummary(go) {
    const keys = Object.keys(DATA.series).sort();
    const picker = el("select", { class: "series-pick", "aria-label": "metric to plot" },
      keys.map((k) => el("option", { value: k }, k)));
    const extra = el("div", { class: "extra-chart" });
    const steps = DATA.iterations.map((r) => r[0]).filter((x) => typeof x === "number");
    const domain = steps.length ? [Math.min(...steps), Math.max(...steps)] : null;
    const drawExtra = () => extra.replaceChildren(chart(picker.value, DATA.series[picker.value], domain));
    picker.addEventListener("change", drawExtra);
    if (keys.includes("update/loss")) picker.value = "update/loss";
    if (keys.length) drawExtra();
    const head = ["step", ...DATA.iteration_columns.map(([title]) => title), "designer failures"];
    const rated = [false, ...DATA.iteration_columns.map(([, rate]) => rate), false];
    const iterations = el("table", { class: "summary iterations" },
      el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
      el("tbody", {}, DATA.iterations.map((row) => el("tr", { class: "row", tabindex: 0,
        title: "show this iteration's designs", onclick: () => go("Designs", { step: String(row[0]) }) },
      row.map((v, i) => el("td", { class: rated[i] ? "score" : "" }, rated[i] ? val(v) : fmt(v)))))));
    return el("section", { class: "tab-body" }, el("h2", {}, "Summary"), facts(DATA.summary),
      el("h3", {}, "Curves"),
      el("div", { class: "charts" }, DATA.curves.map(([key, title]) => chart(title, DATA.series[key], domain))),
      keys.length ? el("div", { class: "pick" }, el("label", {}, "any metric: ", picker), extra) : null,
      el("h3", {}, "Iterations"), DATA.iterations.length ? iterations : el("p", { class: "note" }, "No metrics.jsonl records yet."),
      el("details", {}, el("summary", {}, "config.yaml"), pre(text(DATA.config), "code")));
  }
  function distinct(rows, index) {
    return [...new Set(rows.map((r) => r[index]))].filter((v) => v !== null && v !== undefined);
  }
  function listTab(title, data, opts) {
    const holder = el("div", { class: "detail-holder" });
    if (!data || !data.rows.length) return el("section", { class: "tab-body" }, el("h2", {}, title),
      el("p", { class: "note" }, opts.empty));
    const open = (i) => {
      showDetail(holder, opts.heading(data.rows[i]), opts.columnsOf ? opts.columnsOf(i) : [["", data.details[i]]]);
      saveState({ open: String(i) });
    };
    const table = dataTable({ rows: data.rows, noun: opts.noun, columns: opts.columns, filters: opts.filters,
      search: opts.search, open, placeholder: opts.placeholder });
    const wanted = Number.parseInt(state.open ?? "", 10);
    if (wanted >= 0 && wanted < data.rows.length) queueMicrotask(() => open(wanted));
    return el("section", { class: "tab-body" }, el("h2", {}, title), opts.intro || null, table, holder);
  }
  const col = (title, index, cls, show) => ({ title, value: (r) => r[index], cls, show });
  const choice = (name, label, rows, index, all) => ({ name, label,
    options: [["all", all], ...distinct(rows, index).map((v) => [String(v), String(v)])],
    test: (r, v) => v === "all" || String(r[index]) === v });
  function designsTab() {
    const rows = DATA.designs.rows;
    const status = { name: "status", label: "status", options: [["all", "accepted and rejected"],
      ["accepted", "accepted"], ["rejected", "rejected (any check)"],
      ...distinct(rows, 6).filter((s) => s !== "accepted").map((s) => [`check:${s}`, `failed: ${s}`])],
      test: (r, v) => v === "all" || (v === "accepted" ? r[6] === "accepted" : v === "rejected"
        ? r[6] !== "accepted" : `check:${r[6]}` === v) };
    return listTab("Designs", DATA.designs, {
      noun: "designs", empty: "This run has no designs.jsonl records (fixed-environment runs have none).",
      columns: [col("step", 0), col("group", 1), col("kind", 2), col("skill", 3), col("difficulty", 4),
        col("attempts", 5), col("status", 6, "status"), col("win rate", 7, "score"), col("regret", 8, "score")],
      filters: [choice("step", "iteration", rows, 0, "all iterations"), status],
      search: (r) => `${r[1]} ${r[2]} ${r[3]} ${r[6]}\n${text(r[9])}`,
      placeholder: "filter by check, hint, document or code…",
      heading: (r) => `design ${r[1]} of iteration ${r[0]}`,
    });
  }
  function memoryTab() {
    return listTab("Memory", DATA.memory, {
      noun: "envs", empty: "This run has no memory.json (no env accepted yet).",
      columns: [col("id", 0, "id"), col("kind", 1), col("skill", 2), col("difficulty", 3),
        col("win rate", 4, "score"), col("regret", 5, "score"), col("band", 6), col("joined at", 7),
        col("measured at", 8)],
      filters: [choice("band", "band", DATA.memory.rows, 6, "any band")],
      search: (r) => `${r[0]} ${r[1]} ${r[2]}\n${text(r[9])}`, heading: (r) => `memory entry ${r[0]}`,
    });
  }
  function episodesTab() {
    const data = DATA.episodes;
    return listTab("Episodes", data, {
      noun: "episodes",
      empty: "This run has no sample episodes (episodes.jsonl): the training loop did not record any.",
      intro: el("p", { class: "note" }, "Opening an episode shows the same env and seed played with and without the hint side by side."),
      columns: [col("step", 0), col("env", 1, "id"), col("seed", 2), col("hint", 3, "flag", (v) => (v ? "with" : "without")),
        col("return", 4, "score"), col("turns", 5)],
      filters: data ? [choice("step", "iteration", data.rows, 0, "all iterations"),
        { name: "hint", label: "hint", options: [["all", "with and without hint"], ["with", "with hint"],
          ["without", "without hint"]], test: (r, v) => v === "all" || (v === "with") === r[3] }] : [],
      search: (r) => `${r[1]} ${r[2]}\n${text(r[7])}`,
      heading: (r) => `${r[1]} · seed ${r[2]} · iteration ${r[0]}`,
      columnsOf: (i) => {
        const r = data.rows[i];
        const here = [r[3] ? "with hint" : "without hint", data.details[i]];
        if (r[6] < 0) return [here];
        const there = [r[3] ? "without hint" : "with hint", data.details[r[6]]];
        return r[3] ? [there, here] : [here, there];
      },
    });
  }

  // --- experiment pages ----------------------------------------------------------------------
  const armClass = (arm) => `arm-${Math.max(0, DATA.arms.findIndex((a) => a.name === arm)) % 6}`;
  function legend(arms) {
    return el("div", { class: "legend" }, arms.map((arm) => el("span", { class: "key" },
      el("span", { class: `swatch ${armClass(arm)}` }), arm)));
  }
  function grid(cls, head, rows) {  // rows: lists of cells, a cell a value or [value, attrs]
    return el("table", { class: `summary ${cls}` }, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell) =>
        Array.isArray(cell) ? el("td", cell[1], cell[0]) : el("td", {}, cell))))));
  }
  function meansTable() {
    const m = DATA.means;
    const arms = new Map(DATA.arms.map((a) => [a.name, a]));
    const cell = (c) => (c ? [val(c[0]), { class: "score", title: `mean over ${c[1]} samples` }]
      : ["not run", { class: "missing" }]);
    const rows = m.rows.map(([arm, cells, mean]) => [arm, arms.get(arm).recipe,
      ...(!arms.get(arm).trained
        ? [[cells[0] ? `${val(cells[0][0])} (one evaluation)` : "not run",
          { class: cells[0] ? "score" : "missing", colspan: m.seeds.length }]]
        : cells.map(cell)), [val(mean), { class: "score" }]]);
    return grid("means", ["arm", "recipe", ...m.seeds.map((s) => `seed ${s}`), "mean over seeds"], rows);
  }
  function testsTable() {
    const rows = DATA.effects.map((t) => {
      const e = t.effect;
      const name = t.registered ? `${t.label} (registered)` : t.label;
      if (!e) return [name, t.alternative, "0", "—", "—", "—", "no seed has both arms evaluated yet"];
      return [name, t.alternative, fmt(e.seeds), [signed(e.mean), { class: "score" }], ci(e.ci),
        [val(e.p), { class: "score" }], e.test];
    });
    return grid("tests", ["comparison", "alternative", "seeds", "Δ", "95% CI", "p", "test"], rows);
  }
  function experimentSummary() {
    const done = DATA.units.filter((u) => u[2] === "done").length;
    const units = grid("units", ["unit", "kind", "status", "wall time", "finished"], DATA.units.map((u) =>
      [u[0], u[1], [u[2], { class: u[2] }], u[3] === null ? "—" : `${(u[3] / 60).toFixed(1)} min`, fmt(u[4])]));
    return el("section", { class: "tab-body" }, el("h2", {}, "Summary"), facts(DATA.facts),
      el("h3", {}, `Primary metric by arm and seed (${DATA.facts.find((f) => f[0] === "primary metric")[1]})`),
      el("p", { class: "note" }, "Each cell is the mean over that evaluation's samples; the test's per-seed " +
        "means weigh every env equally over the samples both arms have."),
      meansTable(),
      el("h3", {}, "Tests on the primary metric"), testsTable(),
      el("details", { class: "units", open: done < DATA.units.length },
        el("summary", {}, `Units: ${done} of ${DATA.units.length} done`), units),
      el("h3", {}, "verdict.md"),
      DATA.verdict === null ? el("p", { class: "note" }, "No verdict.md yet: spade-experiment verdict DIR writes it.")
        : pre(text(DATA.verdict), "text verdict"),
      DATA.plan !== null ? el("details", {}, el("summary", {}, "plan.yaml"), pre(text(DATA.plan), "code")) : null);
  }
  function experimentCurves() {
    const lines = Object.values(DATA.series).flat();
    const steps = lines.flatMap((l) => l.points.map((p) => p[0]));
    const domain = steps.length ? [Math.min(...steps), Math.max(...steps)] : null;
    const trained = DATA.arms.filter((a) => a.trained).map((a) => a.name);
    return el("section", { class: "tab-body" }, el("h2", {}, "Curves"),
      el("p", { class: "note" }, "One line per training run (arm and seed), coloured by arm."),
      legend(trained),
      el("div", { class: "charts wide" }, DATA.curves.map((key) => multiChart(key, DATA.series[key].map((l) =>
        ({ points: l.points, cls: armClass(l.arm), name: `${l.arm} seed ${l.seed}` })), domain, [340, 210]))));
  }
  function changeBlock(c, holder) {
    if (!c.per_seed.length) return el("p", { class: "note" }, "No seed has both arms evaluated yet.");
    const counts = grid("per-seed", ["seed", `${c.a} higher`, `${c.b} higher`, "unchanged"],
      c.per_seed.map((row) => row.map(fmt)));
    const filters = [];
    if (c.per_seed.length > 1) filters.push(choice("seed", "seed", c.rows, 1, "all seeds"));
    filters.push({ name: "dir", label: "direction", options: [["all", "either way"], ["up", `${c.a} higher`],
      ["down", `${c.b} higher`]], test: (r, v) => v === "all" || (v === "up" ? r[2] > r[3] : r[2] < r[3]) });
    const table = dataTable({
      rows: c.rows, noun: "changed samples", filters, search: (r) => r[0], placeholder: "filter by sample id…",
      columns: [col("sample id", 0, "id"), col("seed", 1), col(c.a, 2, "score"), col(c.b, 3, "score"),
        { title: "Δ", value: (r) => r[2] - r[3], show: signed, cls: "score delta" }],
      open: (i) => {
        const r = c.rows[i];
        showDetail(holder, `${r[0]} · seed ${fmt(r[1])}`, [[c.a, c.details[i][0]], [c.b, c.details[i][1]]]);
      },
    });
    return el("div", { class: "change-block" }, counts,
      c.rows.length ? table : el("p", { class: "note" }, "No sample changed value."));
  }
  function experimentChanges() {
    const holder = el("div", { class: "detail-holder" });
    const picker = el("select", { class: "comparison-pick", "aria-label": "comparison" },
      DATA.changes.map((c, i) => el("option", { value: String(i) },
        c.kind === "registered" ? c.label : `${c.label} (${c.kind})`)));
    if (DATA.changes[Number(state.cmp)]) picker.value = state.cmp;
    const body = el("div");
    const draw = () => {
      holder.replaceChildren();
      body.replaceChildren(changeBlock(DATA.changes[Number(picker.value)], holder));
    };
    picker.addEventListener("change", () => {
      saveState({ cmp: picker.value, seed: "", dir: "", q: "", open: "" });
      draw();
    });
    draw();
    const metric = DATA.changes.length ? DATA.changes[0].metric : "";
    return el("section", { class: "tab-body" }, el("h2", {}, "Changes"),
      el("p", { class: "note" }, `The samples whose ${metric} differs between the two arms of a comparison, ` +
        "seed by seed (Δ = a − b). Their outputs stay in the run directories; a sample shows its " +
        "committed record (score, metrics, a digest of the output)."),
      el("div", { class: "pick" }, el("label", {}, "comparison: ", picker)), body, holder);
  }

  // --- the page ------------------------------------------------------------------------------
  function start() {
    const tabs = new Map();
    if (DATA.kind === "results") {
      tabs.set("Summary", (go) => resultsSummary(go));
      for (const bench of DATA.benchmarks) tabs.set(bench.name, () => benchmarkTab(bench));
      if (DATA.other) tabs.set("Changes", () => changesTab());
    } else if (DATA.kind === "experiment") {
      tabs.set("Summary", experimentSummary);
      tabs.set("Curves", experimentCurves);
      tabs.set("Changes", experimentChanges);
    } else {
      tabs.set("Summary", (go) => runSummary(go));
      tabs.set("Designs", designsTab);
      tabs.set("Memory", memoryTab);
      tabs.set("Episodes", episodesTab);
    }
    const nav = el("nav", { class: "tabs" });
    const body = el("main");
    function go(name, extra) {
      if (!tabs.has(name)) name = "Summary";
      if (name !== state.tab || extra) {
        for (const key of Object.keys(state)) delete state[key];
        Object.assign(state, extra || {});
      }
      saveState({ tab: name });
      for (const button of nav.children) button.classList.toggle("active", button.dataset.tab === name);
      body.replaceChildren(tabs.get(name)(go));
      window.scrollTo(0, 0);
    }
    for (const name of tabs.keys()) {
      nav.append(el("button", { type: "button", class: "tab", "data-tab": name, onclick: () => go(name) }, name));
    }
    const sub = DATA.kind === "results" && DATA.other ? `${DATA.path} compared with ${DATA.other.path}` : DATA.path;
    app.replaceChildren(headerBlock(DATA.title, sub), nav, body,
      el("footer", {}, `spade ${DATA.spade_version} · a static report: no server, no network`));
    const wanted = state.tab || "Summary";
    go(tabs.has(wanted) ? wanted : "Summary", { ...state });
  }
  start();
})();
