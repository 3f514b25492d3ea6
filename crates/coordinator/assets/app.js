// The tourney dashboard: renders the coordinator's overview as it streams in (server-sent
// events), the selected tournament in detail, and a board viewer for stored games.
"use strict";

const $ = (selector) => document.querySelector(selector);

/** An element with attributes and children (strings become text, never HTML). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const svgNS = "http://www.w3.org/2000/svg";
function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(svgNS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

function compact(x) {
  if (x >= 1e9) return (x / 1e9).toFixed(2) + "G";
  if (x >= 1e6) return (x / 1e6).toFixed(2) + "M";
  if (x >= 1e4) return (x / 1e3).toFixed(1) + "k";
  return x >= 100 ? x.toFixed(0) : x.toFixed(1);
}
const percent = (x) => (x * 100).toFixed(1) + "%";
function duration(seconds) {
  if (seconds < 60) return seconds.toFixed(0) + " s";
  if (seconds < 3600) return (seconds / 60).toFixed(0) + " min";
  return (seconds / 3600).toFixed(1) + " h";
}
function rating(player) {
  const elo = player.elo.toFixed(0);
  if (player.bound === ">") return ">" + elo;
  if (player.bound === "<") return "<" + elo;
  return elo;
}
function fillBody(table, rows) {
  const body = table.querySelector("tbody");
  body.replaceChildren(...rows);
}

/** Shows a server-drawn chart (an HTML figure holding an SVG) as an image, so nothing in it
 * can run; its text alternative is the SVG's title and description where it has them. */
function showChart(container, figure) {
  if (!figure) {
    container.replaceChildren();
    return;
  }
  const start = figure.indexOf("<svg");
  const end = figure.lastIndexOf("</svg>");
  if (start < 0 || end < 0) {
    container.replaceChildren(el("p", { class: "note" }, "(chart unavailable)"));
    return;
  }
  const source = figure.slice(start, end + 6);
  const url = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(source);
  let img = container.querySelector("img");
  if (!img) {
    img = el("img", { alt: container.id.replace("chart-", "") + " chart" });
    container.replaceChildren(img);
  }
  if (img.getAttribute("src") === url) return;
  img.setAttribute("src", url);
  const said = new DOMParser().parseFromString(source, "image/svg+xml");
  const text = ["title", "desc"].map((tag) => said.querySelector(`svg > ${tag}`)?.textContent).filter(Boolean);
  if (text.length) img.setAttribute("alt", text.join(". "));
}

// ---- overview ------------------------------------------------------------------------

const view = { selected: null, overview: null, detailKey: null, recentKey: null, loading: false, search: null };

function selectedFromHash() {
  const m = /^#t=(\d+)$/.exec(location.hash);
  return m ? Number(m[1]) : null;
}

function renderFleet(o) {
  const f = o.fleet;
  $("#version").textContent = "v" + o.version;
  $("#games-per-s").textContent = compact(f.games_per_s);
  $("#nodes-per-s").textContent = compact(f.nodes_per_s);
  $("#workers-count").textContent = f.workers;
  $("#slots-count").textContent = f.slots;
  $("#pairs-leased").textContent = f.pairs_leased;
  $("#games-total").textContent = f.games_total;
  const w = 320, h = 60;
  const points = o.history.length ? o.history : [0];
  const max = Math.max(1, ...points);
  const step = points.length > 1 ? w / (points.length - 1) : w;
  const line = points.map((v, i) => `${(i * step).toFixed(1)},${(h - 4 - (v / max) * (h - 16)).toFixed(1)}`).join(" ");
  $("#throughput").replaceChildren(svg("svg", { viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: "none" },
    svg("polyline", { points: line, fill: "none", stroke: "#2f6fde", "stroke-width": 2 }),
    svg("text", { x: 4, y: 11, "font-size": 10, fill: "#687085" },
      `max ${compact(max)} games/s, ${o.history_bucket_s} s steps`)));
}

function progressCell(t) {
  const planned = t.pairs_planned;
  const bar = planned ? el("span", { class: "progress" },
    el("span", { style: `width:${Math.min(100, (100 * t.pairs_done) / planned).toFixed(1)}%` })) : null;
  return el("td", { class: "name" }, bar, `${t.pairs_done}${planned ? " / " + planned : ""} pairs`);
}

function renderTournaments(o) {
  const table = $("#tournaments table");
  const found = view.search?.found;
  const listed = found ?? o.tournaments;
  $("#tournaments .empty").hidden = listed.length > 0 || !!found;
  const older = o.tournaments_total - o.tournaments.length;
  $("#older").hidden = !!found || older <= 0;
  $("#older").textContent = `The ${o.tournaments.length} most recent of ${o.tournaments_total}: ` +
    `search finds older ones, and the Admin API's List pages through them all.`;
  $("#search-more").hidden = !view.search?.next;
  $("#search-clear").hidden = !found;
  fillBody(table, listed.map((t) => {
    const tail = t.unrunnable ? `no worker can run it: ${t.unrunnable}` : t.sprt
      ? `LLR ${t.sprt.llr.toFixed(2)} [${t.sprt.lower_bound.toFixed(2)}, ${t.sprt.upper_bound.toFixed(2)}]`
      : t.leader ? `${t.leader.name} ${t.leader.elo >= 0 ? "+" : ""}${t.leader.elo.toFixed(0)}` : "";
    return el("tr", {
      class: "selectable" + (t.id === view.selected ? " selected" : ""),
      "data-id": t.id,
      onclick: () => { location.hash = "#t=" + t.id; },
    },
    el("td", {}, t.id), el("td", { class: "name" }, t.name), el("td", { class: "name" }, t.game),
    el("td", { class: "name" }, t.format), el("td", { class: "name" }, el("span", { class: "state " + t.state }, t.state)),
    progressCell(t), el("td", { class: "name" }, tail));
  }));
}

function renderWorkers(o) {
  fillBody($("#workers table"), o.workers.map((w) => el("tr", {},
    el("td", { class: "name" }, w.name), el("td", { class: "name" }, w.id), el("td", { class: "name" }, w.version),
    el("td", {}, w.slots), el("td", {}, w.games), el("td", {}, compact(w.nodes)), el("td", {}, w.rejected),
    el("td", {}, duration(w.connected_s)), el("td", {}, duration(w.last_seen_s) + " ago"))));
}

/** Recent games shown: the selected tournament's, newest first. */
const RECENT_ROWS = 12;

function renderRecent(o) {
  const games = o.recent.filter((g) => g.tournament === view.selected).slice(0, RECENT_ROWS);
  // Rows are replaced only when the list changed, so a button is not swapped under a click.
  const key = JSON.stringify(games);
  if (key === view.recentKey) return;
  view.recentKey = key;
  $("#recent .empty").hidden = games.length > 0;
  fillBody($("#recent table"), games.map((g) => el("tr", { "data-tournament": g.tournament, "data-game": g.game },
    el("td", {}, g.tournament), el("td", {}, g.pair), el("td", { class: "name" }, g.white),
    el("td", { class: "name" }, g.black), el("td", {}, g.result), el("td", { class: "name" }, g.termination),
    el("td", {}, g.plies), el("td", { class: "name" }, g.worker),
    el("td", {}, el("button", { class: "view-game", onclick: () => openViewer(g.tournament, g.pair, g.index) }, "View")))));
}

function renderOverview(o) {
  view.overview = o;
  if (view.selected === null && o.tournaments.length) {
    const running = o.tournaments.find((t) => t.state === "running");
    view.selected = (running || o.tournaments[0]).id;
  }
  renderFleet(o);
  renderTournaments(o);
  renderWorkers(o);
  renderRecent(o);
  refreshDetail();
}

// ---- one tournament --------------------------------------------------------------------

async function refreshDetail() {
  const summary = view.overview && view.overview.tournaments.find((t) => t.id === view.selected);
  if (!summary) {
    $("#detail").hidden = true;
    return;
  }
  const key = `${summary.id}/${summary.pairs_done}/${summary.state}`;
  if (key === view.detailKey || view.loading) return;
  view.loading = true;
  try {
    const response = await fetch(`/api/v1/tournaments/${summary.id}`);
    if (response.ok) {
      renderDetail(await response.json());
      view.detailKey = key;
    }
  } finally {
    view.loading = false;
  }
}

function errorBar(p, lo, hi) {
  const w = 90, x = (v) => ((v - lo) / (hi - lo || 1)) * w;
  return svg("svg", { class: "errorbar", viewBox: `0 0 ${w} 10` },
    svg("line", { x1: x(p.elo - p.minus), x2: x(p.elo + p.plus), y1: 5, y2: 5, stroke: "#2f6fde", "stroke-width": 2 }),
    svg("circle", { cx: x(p.elo), cy: 5, r: 3, fill: "#1d2330" }));
}

// Its games to download (docs/records.md): PGN with move comments, or JSON Lines, gzip.
function showDownloads(t) {
  let p = $("#detail-downloads");
  if (!p) {
    p = el("p", { id: "detail-downloads" });
    $("#detail-share").after(p);
  }
  const file = (name, label) => el("a", { href: `/api/v1/tournaments/${t.id}/${name}`, download: "" }, label);
  p.replaceChildren(...(t.games
    ? ["Download its games: ", file("games.pgn.gz", "PGN"), " · ", file("games.jsonl.gz", "JSON Lines")]
    : []));
}

function renderDetail(t) {
  const r = t.report;
  $("#detail").hidden = false;
  $("#detail-title").textContent = `${t.name} (#${t.id}, ${t.game}, ${t.format})`;
  $("#detail-progress").replaceChildren(el("span", { class: "state " + t.state }, t.state),
    ` ${t.pairs_done}${t.pairs_planned ? " of " + t.pairs_planned : ""} pairs done, ${t.games} games, ${t.pairs_leased} pairs in play`,
    ...(t.paused_reason ? [el("span", { class: "paused-reason" }, ` — paused: ${t.paused_reason} (fix it, then tourney resume ${t.id})`)] : []));
  // Which connected workers can take its pairs ([requires], labels, noisiness).
  $("#detail-eligible").replaceChildren(...(t.unrunnable
    ? [el("span", { class: "paused-reason" }, `No connected worker can run it: ${t.unrunnable}.`)]
    : t.eligible_workers ? [`${t.eligible_workers} connected workers can run it.`] : []));
  // Its share of the fleet's core-time while it is live (docs/operations.md).
  $("#detail-share").textContent = t.share
    ? `${(100 * t.share.now).toFixed(0)}% of the fleet's core-time (target ${(100 * t.share.target).toFixed(0)}%), ${t.share.pairs_per_hour.toFixed(0)} pairs an hour lately.`
    : "";
  showDownloads(t);
  renderActions(t);
  showBuildLog(t);
  $("#notes").replaceChildren(...r.notes.map((note) => el("p", { class: "warning" }, el("strong", {}, "Note: "), note)));
  $("#details").replaceChildren(...r.details.flatMap(([label, value]) => [el("dt", {}, label), el("dd", {}, value)]));
  const players = r.ratings.players;
  const lo = Math.min(...players.map((p) => p.elo - p.minus));
  const hi = Math.max(...players.map((p) => p.elo + p.plus));
  fillBody($("#standings"), players.map((p, i) => el("tr", {},
    el("td", {}, i + 1), el("td", { class: "name" }, p.name), el("td", {}, rating(p)),
    el("td", {}, `+${p.plus.toFixed(0)} −${p.minus.toFixed(0)} `, errorBar(p, lo, hi)),
    el("td", {}, p.games), el("td", {}, percent(p.score)), el("td", {}, percent(p.draws)),
    el("td", {}, p.los_next === null || p.los_next === undefined ? "" : percent(p.los_next)))));
  $("#rating-method").textContent = r.ratings.method;
  showChart($("#chart-standings"), t.charts.standings);
  // A rating pool's ratings by version (the file's order), the best highlighted.
  showChart($("#chart-pool"), t.charts.pool);

  const c = r.crosstable;
  $("#crosstable thead").replaceChildren(el("tr", {}, el("th"), c.names.map((n) => el("th", {}, n))));
  fillBody($("#crosstable"), c.names.map((name, i) => el("tr", {}, el("td", { class: "name" }, name),
    c.cells[i].map(([w, d, l], j) => el("td", {}, i === j ? "—" : `${w}-${d}-${l}`)))));
  $("#terminations").textContent = r.terminations.length
    ? r.terminations.map(([why, n]) => `${why} ${n}`).join(" · ")
    : "no games yet";

  $("#engine-failures").textContent = r.engine_failures.length
    ? r.engine_failures.map(([engine, why, n]) => `${engine}: ${why} ${n}`).join(" · ")
    : "none";
  const w = r.workers;
  $("#workers-test").textContent = `Homogeneity of the workers' results (fishtest's test): ` +
    (w.dof ? `G = ${w.g.toFixed(1)}, ${w.dof} degrees of freedom, p = ${w.p.toExponential(2)}` : "nothing to compare yet") +
    `; ${w.suspects} suspect. Exclude a broken worker's results with tourney exclude ${t.id} <worker> --reason "…".`;
  fillBody($("#tournament-workers"), w.workers.map((x) => el("tr", { class: x.excluded ? "excluded" : x.suspect.length ? "suspect" : "" },
    el("td", { class: "name" }, x.worker), el("td", {}, x.pairs), el("td", {}, x.pentanomial.join(", ")),
    el("td", {}, x.residual.toFixed(2)), el("td", {}, x.time_losses), el("td", {}, x.engine_failures), el("td", {}, x.rejected),
    el("td", { class: "name" }, [x.excluded ? `excluded ${x.excluded}` : "", ...x.suspect].filter(Boolean).join("; ")))));

  // Openings with fewer than 10 games say nothing about them: not listed.
  fillBody($("#openings"), r.openings.filter((o) => o.games >= 10).slice(0, 10).map((o) => el("tr", {},
    el("td", {}, o.index), el("td", { class: "name position" }, o.position), el("td", {}, o.games),
    el("td", {}, percent(o.white_points / Math.max(1, o.games))))));

  // A grouped test's takes, a knockout's bracket or a Swiss's standings.
  const progress = t.progress;
  $("#progress").hidden = !progress;
  if (progress) {
    $("#progress-title").textContent = progress.title;
    $("#progress-table thead").replaceChildren(el("tr", {}, progress.header.map((h) => el("th", {}, h))));
    fillBody($("#progress-table"), progress.rows.map((row) => el("tr", {},
      row.map((cell, i) => el("td", i === 1 ? { class: "name" } : {}, cell)))));
  }

  const tuning = r.spsa;
  $("#spsa").hidden = !tuning;
  if (tuning) {
    $("#spsa-summary").textContent = `${tuning.pairs} of ${tuning.planned} pairs folded in (the completed pairs in order).`;
    fillBody($("#spsa-params"), tuning.params.map((p) => el("tr", {},
      el("td", { class: "name" }, p.name), el("td", {}, p.start.toFixed(2)), el("td", {}, p.value.toFixed(2)),
      el("td", {}, p.min), el("td", {}, p.max), el("td", {}, p.c_k.toFixed(2)), el("td", {}, p.r_k.toFixed(5)))));
    $("#spsa-result").textContent = tuning.result;
    $("#spsa-start").textContent = tuning.start;
    const v = tuning.verification;
    $("#spsa-verification").replaceChildren(...(v != null
      ? ["Verification SPRT: ", el("a", { href: `#t=${v}` }, `tournament #${v}`)]
      : tuning.verify ? [`Verification SPRT [${tuning.verify[0]}, ${tuning.verify[1]}] of tuned against start: submitted when the run ends.`] : []));
    const charts = $("#spsa-charts");
    while (charts.children.length > t.charts.spsa.length) charts.lastChild.remove();
    t.charts.spsa.forEach((figure, i) => {
      if (!charts.children[i]) charts.append(el("div", { id: `chart-spsa-${i}`, class: "chart" }));
      showChart(charts.children[i], figure);
    });
  }

  const s = r.sprt;
  $("#sprt").hidden = !s;
  if (s) {
    const last = s.trajectory[s.trajectory.length - 1];
    const elo = last ? `, Elo ${last.elo.toFixed(1)} [${last.elo_lower.toFixed(1)}, ${last.elo_upper.toFixed(1)}]` : "";
    $("#sprt-summary").replaceChildren(
      `${s.sprt.model} Elo bounds [${s.sprt.elo0}, ${s.sprt.elo1}], α ${s.sprt.alpha}, β ${s.sprt.beta}: LLR `,
      el("strong", { id: "llr" }, s.status.llr.toFixed(2)),
      ` in [${s.status.lower_bound.toFixed(2)}, ${s.status.upper_bound.toFixed(2)}]${elo} — `,
      el("strong", {}, String(t.state === "cancelled" && s.status.decision === "continue" ? "cancelled before a decision" : s.status.decision)),
      s.sequential_pairs === s.estimate.pairs ? ""
        : s.status.decision === "continue" ? ` (the LLR counts the first ${s.sequential_pairs} pairs, those in order with none missing)`
        : ` at pair ${s.sequential_pairs} (${s.estimate.pairs - s.sequential_pairs} more finished after the decision)`);
    const e = s.estimate;
    // As the text report: a bound where every pair was won (or lost), not a number.
    const difference = e.elo_beyond === undefined
      ? `Elo difference ${e.elo.toFixed(2)} ± ${e.elo_error.toFixed(2)} (95%), nElo ${e.nelo.toFixed(2)} ± ${e.nelo_error.toFixed(2)}`
      : `Elo difference ${s.pentanomial.bins[4] > 0 ? ">" : "<"}${e.elo_beyond.toFixed(0)} (95%; every pair ${s.pentanomial.bins[4] > 0 ? "won" : "lost"})`;
    $("#sprt-estimate").textContent = `${difference}, LOS ${percent(e.los)}, ` +
      `Ptnml(0-2) [${s.pentanomial.bins.join(", ")}], ${e.pairs} pairs (${2 * e.pairs} games)`;
    $("#pentanomial tbody tr").replaceChildren(el("th", {}, "Pairs"), ...s.pentanomial.bins.map((n) => el("td", {}, n)));
  }
  showChart($("#chart-llr"), t.charts.llr);
  showChart($("#chart-elo"), t.charts.elo);
  showChart($("#chart-pentanomial"), t.charts.pentanomial);
}

// ---- board viewer ----------------------------------------------------------------------

const viewer = { pair: null, game: 0, ply: 0 };

/** The board of a position string: rows from the top rank down, each cell ' ' or a letter. */
function parseBoard(position) {
  const [board, turn] = position.split(" ");
  const rows = board.split("/").map((rank) => {
    const cells = [];
    for (const token of rank.match(/\d+|[a-z]/g) || []) {
      if (/\d/.test(token)) for (let i = 0; i < Number(token); i++) cells.push(" ");
      else cells.push(token);
    }
    return cells;
  });
  return { rows, turn };
}

/** Squares a move touches, as [file, rank] pairs (0-based, rank 0 at the bottom). */
function moveSquares(move) {
  const squares = [];
  for (const m of (move || "").matchAll(/([a-j])(\d+)/g)) squares.push([m[1].charCodeAt(0) - 97, Number(m[2]) - 1]);
  return squares;
}

function drawBoard(game, position, move) {
  const { rows, turn } = parseBoard(position);
  const n = rows.length, size = 40, margin = 18, full = n * size + margin;
  const board = svg("svg", { viewBox: `0 0 ${full} ${full}`, "data-turn": turn });
  const touched = moveSquares(move);
  for (let r = 0; r < n; r++) {
    for (let f = 0; f < n; f++) {
      const x = margin + f * size, y = r * size;
      const rank = n - 1 - r;
      const square = String.fromCharCode(97 + f) + (rank + 1);
      const light = (f + rank) % 2 === 1;
      const mark = touched.findIndex(([tf, tr]) => tf === f && tr === rank);
      const fill = mark >= 0 ? (light ? "#f2e7a0" : "#d4c36a") : light ? "#eedfc6" : "#b98c63";
      board.append(svg("rect", { x, y, width: size, height: size, fill, "data-square": square }));
      const piece = rows[r][f];
      const cx = x + size / 2, cy = y + size / 2;
      if (piece === "x") {
        board.append(svg("rect", { x: x + 8, y: y + 8, width: size - 16, height: size - 16, rx: 3, fill: "#5a3b2a", class: "arrow", "data-square": square }));
      } else if (piece === "b" || piece === "w") {
        const color = piece === "b" ? "#1b1b1b" : "#fafafa";
        const stroke = piece === "b" ? "#000" : "#333";
        board.append(svg("circle", { cx, cy, r: size * 0.38, fill: color, stroke, "stroke-width": 1.5, class: "piece " + piece, "data-square": square }));
        if (game === "amazons") {
          board.append(svg("text", { x: cx, y: cy + 7, "text-anchor": "middle", "font-size": 20, fill: piece === "b" ? "#fafafa" : "#1b1b1b" }, "♛"));
        }
      }
    }
    board.append(svg("text", { x: 3, y: r * size + size / 2 + 4, "font-size": 11, fill: "#687085" }, String(n - r)));
  }
  for (let f = 0; f < n; f++) {
    board.append(svg("text", { x: margin + f * size + size / 2 - 3, y: full - 4, "font-size": 11, fill: "#687085" }, String.fromCharCode(97 + f)));
  }
  return board;
}

/** What the record says of move `i` (0-based) of game `g`: time, clock, search figures,
 * and for an outside engine its latency and principal variation. */
function moveInfo(g, i, side) {
  const m = g.moves[i];
  const clock = g.clock_ms && g.clock_ms[i] != null ? `clock ${(g.clock_ms[i] / 1000).toFixed(1)} s left` : "";
  const latency = m.engine_ms != null ? `latency ${Math.max(0, m.time_ms - m.engine_ms)} ms` : "";
  const depth = m.depth ? "depth " + m.depth + (m.seldepth ? "/" + m.seldepth : "") : "";
  return [side, m.time_ms + " ms", clock, latency, depth, m.nodes ? m.nodes + " nodes" : "",
    m.nps ? m.nps + " nps" : "", m.score || "", m.pv && m.pv.length ? "pv " + m.pv.join(" ") : ""]
    .filter(Boolean).join(", ");
}

function showPly(ply) {
  const g = viewer.pair.games[viewer.game];
  viewer.ply = Math.max(0, Math.min(ply, g.positions.length - 1));
  const move = viewer.ply > 0 ? g.moves[viewer.ply - 1].move : null;
  $("#board").replaceChildren(drawBoard(g.game, g.positions[viewer.ply], move));
  $("#board").setAttribute("aria-label", `Position after ${viewer.ply} plies`);
  $("#viewer-ply").textContent = `ply ${viewer.ply} / ${g.positions.length - 1}` + (move ? `: ${move}` : "");
  $("#viewer-ply").dataset.ply = viewer.ply;
  $("#viewer-position").textContent = g.positions[viewer.ply];
  const mover = (position) => (position.split(" ")[1] === "b" ? "Black" : "White");
  $("#viewer-move-info").textContent = viewer.ply > 0 ? moveInfo(g, viewer.ply - 1, mover(g.positions[viewer.ply - 1])) : "";
  for (const span of $("#moves").querySelectorAll(".ply")) span.classList.toggle("current", Number(span.dataset.ply) === viewer.ply);
}

function showGame(index) {
  viewer.game = index;
  const g = viewer.pair.games[index];
  $("#viewer-title").textContent = `${g.white} (White) – ${g.black} (Black)`;
  $("#viewer-result").textContent = `Tournament ${viewer.pair.tournament}, pair ${viewer.pair.pair}, game ${index + 1}: ` +
    `${g.result} by ${g.termination}${g.detail ? " (" + g.detail + ")" : ""}` +
    (g.replay_error ? ` — replay stopped: ${g.replay_error}` : "");
  // Numbered by move, both sides on one line; the side that moves first in the start
  // position (Black in LOA, White in Amazons) comes first, "1... " when the other starts.
  const mover = (position) => (position.split(" ")[1] === "b" ? "Black" : "White");
  const first = g.game === "loa" ? "Black" : "White";
  const offset = mover(g.positions[0]) === first ? 0 : 1;
  const lines = [];
  g.moves.forEach((m, i) => {
    const slot = i + offset;
    if (i === 0 || slot % 2 === 0) lines.push(el("li", {}, el("span", { class: "number" }, `${Math.floor(slot / 2) + 1}.${slot % 2 ? ".." : ""}`)));
    lines[lines.length - 1].append(" ", el("span", {
      class: "ply" + (i < g.opening_plies ? " opening" : ""),
      "data-ply": i + 1,
      title: moveInfo(g, i, mover(g.positions[i])),
      onclick: () => showPly(i + 1),
    }, m.move));
  });
  $("#moves").replaceChildren(...lines);
  // Each side's engine log (its protocol transcript and stderr), when the game kept one
  // (`engine_logs = "all"`, or the side lost by failing): a link that shows it below.
  const log = $("#engine-log");
  log.hidden = true;
  const links = [["White", g.white, g.white_log], ["Black", g.black, g.black_log]]
    .filter(([, , lines]) => lines && lines.length)
    .map(([side, name, lines]) => el("a", {
      href: "#engine-log",
      class: "log-link",
      onclick: (event) => {
        event.preventDefault();
        log.textContent = lines.join("\n");
        log.hidden = false;
      },
    }, `${side}'s log (${name}, ${lines.length} lines)`));
  $("#log-links").replaceChildren(...links.flatMap((a, i) => (i ? [" · ", a] : [a])));
  for (const i of [0, 1]) {
    const tab = $("#game-" + i);
    tab.hidden = i >= viewer.pair.games.length;
    tab.classList.toggle("active", i === index);
  }
  showPly(0);
}

async function openViewer(tournament, pair, game) {
  const response = await fetch(`/api/v1/tournaments/${tournament}/pairs/${pair}`);
  if (!response.ok) return;
  viewer.pair = await response.json();
  showGame(Math.min(game, viewer.pair.games.length - 1));
  if (!$("#viewer").open) $("#viewer").showModal();
}

$("#first").addEventListener("click", () => showPly(0));
$("#prev").addEventListener("click", () => showPly(viewer.ply - 1));
$("#next").addEventListener("click", () => showPly(viewer.ply + 1));
$("#last").addEventListener("click", () => showPly(Infinity));
$("#game-0").addEventListener("click", () => showGame(0));
$("#game-1").addEventListener("click", () => showGame(1));
document.addEventListener("keydown", (e) => {
  if (!$("#viewer").open) return;
  const step = { ArrowLeft: -1, ArrowRight: 1 }[e.key];
  if (step) showPly(viewer.ply + step);
  if (e.key === "Home") showPly(0);
  if (e.key === "End") showPly(Infinity);
});

// ---- search --------------------------------------------------------------------------

/** Searches the tournaments by the form's fields; `more` appends the next page. */
async function search(more) {
  const fields = ["q", "author", "engine", "state", "verdict"];
  const params = new URLSearchParams();
  for (const field of fields) {
    const value = $(`#search-${field}`).value.trim();
    if (value) params.set(field, value);
  }
  const day = (id) => $(id).value ? Date.parse($(id).value + "T00:00:00Z") : null;
  if (day("#search-since") !== null) params.set("since_ms", day("#search-since"));
  if (day("#search-until") !== null) params.set("until_ms", day("#search-until") + 86400000);
  if (more && view.search?.next) params.set("after", view.search.next);
  const answer = await fetch(`/api/v1/search?${params}`);
  if (!answer.ok) return;
  const page = await answer.json();
  const found = more ? [...(view.search?.found ?? []), ...page.tournaments] : page.tournaments;
  view.search = { found, next: page.next };
  if (view.overview) renderTournaments(view.overview);
}

$("#search-form").addEventListener("submit", (e) => { e.preventDefault(); search(false); });
$("#search-more").addEventListener("click", () => search(true));
$("#search-mine").addEventListener("click", () => {
  $("#search-form").reset();
  $("#search-author").value = account.me?.name ?? "";
  search(false);
});
$("#search-clear").addEventListener("click", () => {
  view.search = null;
  $("#search-form").reset();
  if (view.overview) renderTournaments(view.overview);
});

// ---- accounts: logging in, actions, the events log ------------------------------------

const account = { me: null, logBefore: 0 };

/** Who is logged in (with the session's CSRF token), or null. */
async function loadMe() {
  const answer = await fetch("/api/v1/me");
  account.me = answer.ok ? await answer.json() : null;
  renderAccount();
}

function renderAccount() {
  const me = account.me;
  $("#login-open").hidden = !!me;
  $("#logout").hidden = !me;
  $("#log-open").hidden = !me;
  $("#new-open").hidden = !me || me.role === "viewer";
  $("#me-open").hidden = !me;
  $("#search-mine").hidden = !me;
  if (!me) $("#me").hidden = true;
  // Logged out: the test's actions go at once, not at the next refresh.
  if (!me) $("#actions").hidden = true;
  $("#account-name").hidden = !me;
  $("#account-name").textContent = me ? `${me.name} (${me.role})` : "";
  if (!me) $("#log").hidden = true;
  view.detailKey = null;
  if (view.overview) renderOverview(view.overview);
}

/** A POST of the logged-in user (with `body` as JSON), with its CSRF token; the answer's
 *  JSON (or an error). */
async function act(path, body) {
  const headers = { "X-CSRF-Token": account.me?.csrf ?? "", "Content-Type": "application/json" };
  const answer = await fetch(path, { method: "POST", headers, body: body ? JSON.stringify(body) : "" });
  const said = answer.status === 204 ? {} : await answer.json().catch(() => ({}));
  return answer.ok ? said : { error: said.error ?? `failed (${answer.status})` };
}

/** The action buttons of tournament `t`, by its state and the user's role. */
function renderActions(t) {
  const me = account.me;
  const live = ["queued", "running", "paused", "pending"].includes(t.state);
  const approver = me && (me.role === "approver" || me.role === "admin");
  $("#actions").hidden = !me;
  $("#share").hidden = !live;
  $("#action-approve").hidden = !(t.state === "pending" && approver);
  $("#action-resume").hidden = !["paused", "cancelled"].includes(t.state);
  $("#action-cancel").hidden = !live;
  if ($("#cancel-confirm").dataset.for !== String(t.id)) $("#cancel-confirm").hidden = true;
  const budgeted = ["sprt", "match"].includes(t.format);
  $("#share-budget-label").hidden = !budgeted;
  // A field the user has changed keeps its value until it is sent or another test shown.
  const fields = { "#share-priority": t.priority, "#share-weight": t.weight, "#share-budget": t.max_pairs };
  for (const [id, value] of Object.entries(fields)) {
    const input = $(id);
    if (input.dataset.for !== String(t.id)) delete input.dataset.edited;
    input.dataset.for = t.id;
    input.oninput = () => { input.dataset.edited = "yes"; };
    if (!input.dataset.edited) input.value = value;
  }
  const ended = ["finished", "cancelled"].includes(t.state);
  $("#action-delete").hidden = !me || me.role === "viewer" || !ended;
  $("#action-modify").onclick = async () => {
    const change = { priority: Number($("#share-priority").value), weight: Number($("#share-weight").value) };
    const budget = Number($("#share-budget").value);
    if (budgeted && budget && budget !== t.max_pairs) change.pair_budget = budget;
    const done = await act(`/api/v1/tournaments/${t.id}/modify`, change);
    if (!done.error) for (const id of Object.keys(fields)) delete $(id).dataset.edited;
    $("#action-result").textContent = done.error ?? done.done;
    view.detailKey = null;
    if (view.overview) renderOverview(view.overview);
  };
  $("#annotate").hidden = !me || me.role === "viewer";
  $("#action-clone").hidden = !me || me.role === "viewer";
  $("#action-annotate").onclick = async () => {
    const links = $("#note-links").value.split(/\s+/).filter((l) => l);
    const done = await act(`/api/v1/tournaments/${t.id}/annotate`, { note: $("#note-text").value, links });
    $("#action-result").textContent = done.error ?? done.done;
    view.detailKey = null;
    if (view.overview) renderOverview(view.overview);
  };
  $("#action-clone").onclick = async () => {
    const answer = await fetch(`/api/v1/tournaments/${t.id}/file`);
    const file = await answer.json();
    if (!answer.ok) {
      $("#action-result").textContent = file.error ?? `failed (${answer.status})`;
      return;
    }
    openNewTest(file);
  };
  // Stop asks first: its games are kept, but workers drop its pairs at once.
  $("#action-cancel").onclick = () => {
    $("#cancel-confirm").dataset.for = t.id;
    $("#cancel-confirm").hidden = false;
  };
  $("#action-cancel-no").onclick = () => { $("#cancel-confirm").hidden = true; };
  for (const [button, action] of [["approve", "approve"], ["resume", "resume"], ["cancel-yes", "cancel"], ["delete", "delete"]]) {
    $(`#action-${button}`).onclick = async () => {
      $("#cancel-confirm").hidden = true;
      const done = await act(`/api/v1/tournaments/${t.id}/${action}`);
      $("#action-result").textContent = done.error ?? done.done;
      if (action === "delete" && view.search) search(false);
      view.detailKey = null;
      if (view.overview) renderOverview(view.overview);
    };
  }
}

// The build log that paused a test: only its author, approvers and admins get it.
async function showBuildLog(t) {
  const box = $("#build-log");
  if (t.state !== "paused" || !account.me) {
    box.hidden = true;
    return;
  }
  if (box.dataset.for === String(t.id) && !box.hidden) return;
  box.dataset.for = t.id;
  const answer = await fetch(`/api/v1/tournaments/${t.id}/build-log`);
  box.hidden = !answer.ok;
  if (answer.ok) box.querySelector("pre").textContent = await answer.text();
}

async function showLog(older) {
  if (!older) account.logBefore = 0;
  const answer = await fetch(`/api/v1/log?limit=50&before=${account.logBefore}`);
  if (!answer.ok) return;
  const events = await answer.json();
  const rows = events.map((e) => el("tr", {},
    el("td", {}, e.seq), el("td", {}, new Date(e.at_ms).toISOString().slice(0, 19).replace("T", " ")),
    el("td", {}, e.who), el("td", {}, e.action), el("td", {}, e.subject), el("td", {}, e.detail)));
  if (older) $("#log tbody").append(...rows);
  else $("#log tbody").replaceChildren(...rows);
  if (events.length) account.logBefore = events[events.length - 1].seq;
  $("#log-older").hidden = events.length < 50;
  $("#log").hidden = false;
}

$("#login-open").addEventListener("click", () => {
  $("#login-error").textContent = "";
  $("#login").showModal();
});
$("#login-cancel").addEventListener("click", () => $("#login").close());
$("#login-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const answer = await fetch("/api/v1/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name: $("#login-name").value, password: $("#login-password").value }),
  });
  $("#login-password").value = "";
  if (!answer.ok) {
    const body = await answer.json().catch(() => ({}));
    $("#login-error").textContent = body.error ?? `failed (${answer.status})`;
    return;
  }
  $("#login").close();
  await loadMe();
});
$("#logout").addEventListener("click", async () => {
  await act("/api/v1/logout");
  await loadMe();
});
$("#log-open").addEventListener("click", () => showLog(false));

/** The account section: own tokens and password, and for admins the users. */
async function showMe() {
  const say = (done) => { $("#me-result").textContent = done.error ?? ""; };
  const tokens = await (await fetch("/api/v1/account/tokens")).json();
  fillBody($("#tokens"), tokens.map((t) => el("tr", {},
    el("td", { class: "name" }, t.id), el("td", { class: "name" }, t.label),
    el("td", { class: "name" }, new Date(t.created_ms).toISOString().slice(0, 16).replace("T", " ")),
    el("td", {}, el("button", { type: "button", onclick: async () => {
      say(await act(`/api/v1/account/tokens/${encodeURIComponent(t.id)}/revoke`));
      showMe();
    } }, "Revoke")))));
  const admin = account.me?.role === "admin";
  $("#users-admin").hidden = !admin;
  if (admin) {
    const users = await (await fetch("/api/v1/account/users")).json();
    fillBody($("#users"), users.map((u) => {
      const role = el("select", { "aria-label": `Role of ${u.name}` },
        ...["viewer", "user", "approver", "admin"].map((r) => el("option", r === u.role ? { selected: "" } : {}, r)));
      role.addEventListener("change", async () => {
        say(await act(`/api/v1/account/users/${encodeURIComponent(u.name)}/role`, { role: role.value }));
        showMe();
      });
      return el("tr", {}, el("td", { class: "name" }, u.name), el("td", { class: "name" }, role),
        el("td", {}, u.tokens), el("td", { class: "name" }, u.has_password ? "yes" : "no"),
        el("td", {}, el("button", { type: "button", onclick: async () => {
          say(await act(`/api/v1/account/users/${encodeURIComponent(u.name)}/remove`));
          showMe();
        } }, "Remove")));
    }));
  }
  $("#me").hidden = false;
}

$("#me-open").addEventListener("click", () => showMe());

/** The machines section: every worker host; admins block and unblock them. */
async function showMachines() {
  const answer = await fetch("/api/v1/machines");
  if (!answer.ok) return;
  const { machines, min_worker_version: lowest } = await answer.json();
  const admin = account.me?.role === "admin";
  const say = (done) => { $("#machines-result").textContent = done.error ?? ""; showMachines(); };
  fillBody($("#machines"), machines.map((m) => {
    const message = el("input", { placeholder: "message to its workers", "aria-label": `Why block ${m.host}` });
    const control = !admin ? "" : m.blocked
      ? el("button", { type: "button", onclick: async () => say(await act(`/api/v1/account/machines/${encodeURIComponent(m.host)}/unblock`)) }, "Unblock")
      : el("span", {}, message, el("button", { type: "button", onclick: async () =>
        say(await act(`/api/v1/account/machines/${encodeURIComponent(m.host)}/block`, { message: message.value })) }, "Block"));
    return el("tr", {}, el("td", { class: "name" }, m.host), el("td", { class: "name" }, m.facts.cpu_model, ...gpuLines(m.facts.gpus ?? [])),
      el("td", {}, m.facts.cores), el("td", {}, m.facts.memory_mb ? `${m.facts.memory_mb} MiB` : ""),
      el("td", { class: "name" }, m.facts.os), el("td", { class: "name" }, m.versions.join(", ")),
      el("td", {}, m.registrations), el("td", {}, m.slots), el("td", {}, m.games),
      el("td", {}, m.facts.speed_nps ? compact(m.facts.speed_nps) : "–"),
      el("td", { class: "name benches" }, ...m.benches.map((b) => el("div", { title: `tournament ${b.tournament}` },
        `${b.version}: ${b.bench_nodes ?? "no bench"}${b.bench_nps ? ` @ ${compact(b.bench_nps)} nps` : ""}` +
        `${b.build_ms ? `, built in ${(b.build_ms / 1000).toFixed(1)} s` : ""}${b.problem ? ` — refused: ${b.problem.split("\n")[0]}` : ""}`))),
      el("td", { class: "name" }, m.last_seen_ms ? new Date(m.last_seen_ms).toISOString().slice(0, 19).replace("T", " ") : "–"),
      el("td", { class: "name" }, m.blocked ?? ""), el("td", {}, control));
  }));
  $("#min-version-note").textContent = `Lowest worker version accepted: ${lowest ?? "any"}.`;
  $("#min-version-form").hidden = !admin;
  $("#machines").hidden = false;
}

/** A host's GPUs, one line a kind ("GPU: 2 × NVIDIA GeForce RTX 4090, 24564 MiB"). */
function gpuLines(gpus) {
  const kinds = new Map();
  for (const g of gpus) {
    const name = [g.model || g.vendor || "unknown", g.memory_mb ? `${g.memory_mb} MiB` : ""].filter(Boolean).join(", ");
    kinds.set(name, (kinds.get(name) ?? 0) + 1);
  }
  return [...kinds].map(([name, n]) => el("div", { class: "gpu" }, `GPU: ${n} × ${name}`));
}

$("#machines-open").addEventListener("click", () => showMachines());

/** The verdicts section: the accepted tests of each engine line. */
async function showVerdicts() {
  const answer = await fetch("/api/v1/verdicts");
  if (!answer.ok) return;
  const lines = await answer.json();
  const version = (name) => el("a", { href: `/timeline#${encodeURIComponent(name)}` }, name);
  $("#verdict-lines").replaceChildren(...(lines.length ? lines.map((l) => el("div", {},
    el("h3", {}, l.line),
    el("table", {}, el("thead", {}, el("tr", {}, ...["Test", "Patch", "Base", "Elo", "Pairs", "Ended"].map((h) => el("th", { class: "name" }, h)))),
      el("tbody", {}, ...l.verdicts.map((v) => el("tr", {},
        el("td", { class: "name" }, el("a", { href: `#t=${v.id}` }, `${v.id} ${v.name}`)),
        el("td", { class: "name" }, version(v.patch)), el("td", { class: "name" }, version(v.base)),
        el("td", {}, v.elo === null ? "–" : v.elo.toFixed(1)), el("td", {}, v.pairs),
        el("td", { class: "name" }, v.ended_ms ? new Date(v.ended_ms).toISOString().slice(0, 16).replace("T", " ") : "–")))))))
    : [el("p", { class: "note" }, "No test has been accepted yet.")]));
  $("#verdicts").hidden = false;
}

$("#verdicts-open").addEventListener("click", () => showVerdicts());
$("#min-version-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const done = await act("/api/v1/account/min-worker-version", { version: $("#min-version").value });
  $("#machines-result").textContent = done.error ?? "";
  showMachines();
});
$("#token-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const made = await act("/api/v1/account/tokens", { label: $("#token-label").value });
  $("#me-result").textContent = made.error ?? "";
  $("#token-new").textContent = made.token ? `${made.token} (id ${made.id}): copy it now, it is not shown again` : "";
  showMe();
});
$("#password-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const done = await act("/api/v1/account/password", { password: $("#password-new").value });
  $("#password-new").value = "";
  $("#me-result").textContent = done.error ?? "password changed";
});
$("#user-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const done = await act("/api/v1/account/users", {
    name: $("#user-name").value, role: $("#user-role").value, password: $("#user-password").value,
  });
  $("#user-password").value = "";
  $("#me-result").textContent = done.error ?? "";
  showMe();
});
$("#log-older").addEventListener("click", () => showLog(true));
loadMe();

// ---- live updates ----------------------------------------------------------------------

window.addEventListener("hashchange", () => {
  view.selected = selectedFromHash() ?? view.selected;
  view.detailKey = null;
  if (view.overview) renderOverview(view.overview);
});
view.selected = selectedFromHash();

const events = new EventSource("/api/v1/events");
events.addEventListener("overview", (e) => {
  $("#connection").className = "live";
  $("#connection").textContent = "live";
  renderOverview(JSON.parse(e.data));
});
events.addEventListener("error", () => {
  $("#connection").className = "offline";
  $("#connection").textContent = "reconnecting…";
});
