// The New test dialog: a form for every tournament format that writes the tournament file
// (shown, downloadable, editable as TOML), or a file pasted or loaded as it is. Either way
// the coordinator checks it as `tourney submit` does; an error that names a key is shown
// beside that key's field. Uses app.js's `$`, `el`, `act` and `account`.
"use strict";

const form = { mode: "form", versions: [], openingsFile: null, book: null, linePresets: "" };

/** A TOML value: numbers as they are, everything else a basic string (JSON's escapes are
 *  TOML's). */
const tomlValue = (v) => (typeof v === "number" ? String(v) : JSON.stringify(String(v)));

/** An inline table of the entries of `pairs` whose value is set (a value that is itself
 *  an inline table, as `inline` makes it, is nested as it is); null when none is. */
function inline(pairs) {
  const set = Object.entries(pairs).filter(([, v]) => v !== "" && v !== null && v !== undefined);
  const value = (v) => (v instanceof InlineTable ? v.text : tomlValue(v));
  return set.length ? new InlineTable(`{ ${set.map(([k, v]) => `${k} = ${value(v)}`).join(", ")} }`) : null;
}

/** TOML text of an inline table. */
class InlineTable {
  constructor(text) { this.text = text; }
  toString() { return this.text; }
}

/** A number field's value (null when empty). */
function num(id) {
  const v = $(id).value.trim();
  return v === "" ? null : Number(v);
}

/** One row of the engines table: what kind of engine and its fields. */
function engineRow(kind = "version", values = {}) {
  // Every input has a visible label; the placeholder is only an example.
  const input = (key, label, placeholder, value = "", attrs = {}) =>
    el("label", { class: "engine-field" }, label,
      el("input", { "data-field": key, placeholder, value, ...attrs }));
  const kindSelect = el("select", { "data-field": "kind", "aria-label": "Kind of engine" },
    ...[["version", "registered version"], ["player", "built-in player"], ["source", "from source"]]
      .map(([v, label]) => el("option", v === kind ? { value: v, selected: "" } : { value: v }, label)));
  const fields = {
    version: [input("version", "Version", "v2", values.version ?? "", { list: "f-versions" })],
    player: [input("player", "Player spec", "ab:depth=3", values.player ?? "")],
    source: [
      input("git", "Repository", "https://github.com/me/engine", values.git ?? ""),
      input("commit", "Commit (full hash)", "0123abcd…", values.commit ?? "", { size: 12 }),
      input("build", "Build command", "make -j", values.build ?? ""),
      input("binary", "Program path", "build/engine", values.binary ?? ""),
      input("bench", "Bench nodes (optional)", "1234567", values.bench ?? "", { size: 10 }),
    ],
  };
  const cell = el("td", { class: "name engine-fields" });
  const row = el("tr", {}, el("td", { class: "name" }, kindSelect), cell,
    el("td", { class: "name" }, input("name", "Name", "optional", values.name ?? "", { size: 12 })),
    el("td", {}, el("button", { type: "button", "aria-label": "Remove this engine", onclick: () => { row.remove(); renderForm(); } }, "✕")));
  const show = () => {
    cell.replaceChildren(...fields[kindSelect.value]);
    renderForm();
  };
  kindSelect.addEventListener("change", show);
  show();
  return row;
}

/** The options field (`Hash=64 Threads=1`) as an inline table of strings; null when empty. */
function engineOptions() {
  const pairs = $("#f-options").value.trim().split(/\s+/).filter((p) => p);
  if (!pairs.length) return null;
  const items = pairs.map((p) => {
    const at = p.indexOf("=");
    const [k, v] = at < 0 ? [p, ""] : [p.slice(0, at), p.slice(at + 1)];
    return `${JSON.stringify(k)} = ${JSON.stringify(v)}`;
  });
  return new InlineTable(`{ ${items.join(", ")} }`);
}

/** Whether the engine of kind `kind` (and registered version `version`) takes options: an
 *  engine from source, or a version that is no built-in player. */
function takesOptions(kind, version) {
  if (kind === "source") return true;
  return kind === "version" && form.versions.find((v) => v.name === version)?.kind !== "player";
}

/** The engines table's rows as `[[engine]]` tables. */
function engines() {
  const options = engineOptions();
  return [...document.querySelectorAll("#f-engines tbody tr")].map((row) => {
    const get = (key) => row.querySelector(`[data-field="${key}"]`)?.value.trim() ?? "";
    const kind = get("kind");
    const entry = {};
    if (get("name")) entry.name = get("name");
    if (kind === "version") entry.version = get("version");
    if (kind === "player") entry.player = get("player");
    if (kind === "source") {
      for (const key of ["git", "commit", "build", "binary"]) entry[key] = get(key);
      const bench = row.querySelector('[data-field="bench"]').value.trim();
      if (bench) entry.bench = Number(bench);
    }
    if (options && takesOptions(kind, entry.version)) entry.options = options;
    return entry;
  });
}

/** The tournament file the form describes. */
function formToml() {
  const format = $("#f-format").value;
  const lines = [`name = ${tomlValue($("#f-name").value.trim())}`, `game = ${tomlValue($("#f-game").value)}`];
  if ($("#f-game").value === "amazons" && $("#f-size").value === "8") lines.push('rules = { size = "8" }');
  lines.push(`format = ${tomlValue(format)}`);
  if (format === "sprt" || format === "takes") {
    lines.push(`sprt = ${inline({ elo0: num("#f-elo0"), elo1: num("#f-elo1"), alpha: num("#f-alpha"),
      beta: num("#f-beta"), model: $("#f-model").value, max_pairs: num("#f-max-pairs") })}`);
  }
  if (["match", "knockout", "swiss"].includes(format)) lines.push(`pairs = ${num("#f-pairs") ?? 0}`);
  if (["gauntlet", "round-robin", "pyramid", "swiss"].includes(format)) lines.push(`rounds = ${num("#f-rounds") ?? 0}`);
  if (format === "gauntlet" && (num("#f-seeds") ?? 1) > 1) lines.push(`seeds = ${num("#f-seeds")}`);
  if (format === "knockout") lines.push(`tiebreak_pairs = ${num("#f-tiebreak") ?? 0}`);
  if ($("#f-openings-kind").value === "file") {
    lines.push(`openings = ${inline({ file: form.openingsFile?.name ?? form.book ?? "", format: $("#f-openings-format").value,
      order: $("#f-openings-order").value === "random" ? "random" : "", seed: num("#f-seed") })}`);
  } else {
    lines.push(`openings = ${inline({ plies: num("#f-plies"), seed: num("#f-seed") })}`);
  }
  lines.push(`limits = ${inline({ tc: $("#f-tc").value.trim(), movetime: num("#f-movetime"),
    nodes: num("#f-nodes"), depth: num("#f-depth") }) ?? "{}"}`);
  const resign = inline({ score: num("#f-resign-score"), moves: num("#f-resign-moves") });
  const draw = inline({ score: num("#f-draw-score"), moves: num("#f-draw-moves") });
  lines.push(`adjudication = ${inline({ max_plies: num("#f-max-plies"), resign, draw }) ?? "{}"}`);
  lines.push(`priority = ${num("#f-priority") ?? 0}`, `weight = ${num("#f-weight") ?? 1}`);
  if (num("#f-threads") !== null) lines.push(`threads = ${num("#f-threads")}`);
  if (format === "spsa") {
    lines.push("", "[spsa]", `pairs = ${num("#f-spsa-pairs") ?? 0}`);
    const verify = $("#f-verify").value.split(",").map((x) => x.trim()).filter((x) => x);
    if (verify.length) lines.push(`verify = ${inline({ elo0: Number(verify[0]), elo1: Number(verify[1] ?? "") })}`);
    for (const line of $("#f-spsa-params").value.split("\n").map((l) => l.trim()).filter((l) => l)) {
      const [name, start, min, max, cEnd, rEnd] = line.split(/\s+/);
      const numeric = (x) => (x === undefined || x === "" || Number.isNaN(Number(x)) ? tomlValue(x ?? "") : x);
      lines.push("", "[[spsa.param]]", `name = ${tomlValue(name)}`, `start = ${numeric(start)}`,
        `min = ${numeric(min)}`, `max = ${numeric(max)}`, `c_end = ${numeric(cEnd)}`, `r_end = ${numeric(rEnd)}`);
    }
  }
  for (const engine of engines()) {
    lines.push("", "[[engine]]", ...Object.entries(engine)
      .map(([k, v]) => `${k} = ${v instanceof InlineTable ? v.text : tomlValue(v)}`));
  }
  return lines.join("\n") + "\n";
}

/** Shows what the format needs, and the file the form makes. */
function renderForm() {
  const format = $("#f-format").value;
  $("#f-sprt").hidden = !["sprt", "takes"].includes(format);
  $("#f-spsa").hidden = format !== "spsa";
  $("#f-count").hidden = !["match", "gauntlet", "round-robin", "knockout", "pyramid", "swiss"].includes(format);
  $("#f-pairs-label").hidden = !["match", "knockout", "swiss"].includes(format);
  $("#f-rounds-label").hidden = !["gauntlet", "round-robin", "pyramid", "swiss"].includes(format);
  $("#f-seeds-label").hidden = format !== "gauntlet";
  $("#f-tiebreak-label").hidden = format !== "knockout";
  $("#f-size-label").hidden = $("#f-game").value !== "amazons";
  const fromFile = $("#f-openings-kind").value === "file";
  for (const label of document.querySelectorAll(".f-generated")) label.hidden = fromFile && !label.querySelector("#f-seed");
  for (const label of document.querySelectorAll(".f-openings-file")) label.hidden = !fromFile;
  $("#f-book").hidden = !fromFile || !form.book || form.openingsFile !== null;
  $("#f-book").textContent = form.book ? `Book: the uploaded file ${form.book.slice(0, 12)}… (or choose a file)` : "";
  showLinePresets();
  $("#f-engines-note").textContent = {
    sprt: "Two engines: the patch first, then its base.", match: "Two engines.",
    gauntlet: "The first engine plays each of the others.", "round-robin": "Every engine plays every other.",
    spsa: "One engine, tuned against itself.",
    takes: "The base first, then 1 to 16 takes of one idea; α is the whole group's.",
    knockout: "Seeded in this order (the first is seed 1); pairs a match, then tie-breaks, then the higher seed.",
    pyramid: "Each engine plays every engine above it.",
    swiss: "Rounds paired by score, no pairing twice; pairs a pairing.",
  }[format];
  const toml = formToml();
  $("#new-preview").textContent = toml;
  const link = $("#new-download");
  if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([toml], { type: "application/toml" }));
  link.download = `${$("#f-name").value.trim() || "test"}.toml`;
}

/** The registered version the first engine row names, if any. */
function firstVersion() {
  const row = $("#f-engines tbody tr");
  if (row?.querySelector('[data-field="kind"]').value !== "version") return null;
  const name = row.querySelector('[data-field="version"]')?.value.trim();
  return form.versions.find((v) => v.name === name) ?? null;
}

/** Offers the presets of the first engine's version (`tourney version add --preset`), when
 *  it has any; the list is made again only when the version's presets change. */
function showLinePresets() {
  const presets = firstVersion()?.presets ?? {};
  const names = Object.keys(presets);
  const key = JSON.stringify(presets);
  $("#f-line-preset-label").hidden = names.length === 0;
  if (key !== form.linePresets) {
    form.linePresets = key;
    $("#f-line-preset").replaceChildren(el("option", { value: "" }, "none"),
      ...names.map((n) => el("option", { value: n }, n)));
  }
  const chosen = presets[$("#f-line-preset").value];
  $("#f-line-preset-spec").hidden = !chosen;
  $("#f-line-preset-spec").textContent = chosen ? chosen.spec : "";
}

/** Fills the form's fields from preset `p` of a version's line: what it sets (its clock,
 *  per-move limits, threads, bounds, pair budget, priority, weight, book and options), the
 *  other fields kept. */
function applyLinePreset(p) {
  const set = (id, v) => { if (v !== null && v !== undefined) $(id).value = v; };
  set("#f-tc", p.tc); set("#f-nodes", p.nodes); set("#f-depth", p.depth); set("#f-movetime", p.movetime);
  // A preset's clock is its test's time: the per-move limits it does not set are cleared
  // (the form's default nodes would cut every move of an LTC short).
  if (p.tc) {
    for (const [id, v] of [["#f-nodes", p.nodes], ["#f-depth", p.depth], ["#f-movetime", p.movetime]]) {
      if (v === null || v === undefined) $(id).value = "";
    }
  }
  set("#f-threads", p.threads);
  set("#f-elo0", p.elo0); set("#f-elo1", p.elo1); set("#f-max-pairs", p.max_pairs);
  set("#f-priority", p.priority); set("#f-weight", p.weight);
  const bounds = `${$("#f-elo0").value},${$("#f-elo1").value}`;
  $("#f-preset").value = [...$("#f-preset").options].some((o) => o.value === bounds) ? bounds : "";
  if (p.book) {
    form.book = p.book;
    form.openingsFile = null;
    $("#f-openings-file").value = "";
    $("#f-openings-kind").value = "file";
    set("#f-openings-format", p.book_format ?? "");
    set("#f-openings-order", p.book_order);
  }
  const options = Object.entries(p.options ?? {});
  if (options.length) {
    // Its options over those the field has.
    const had = $("#f-options").value.trim().split(/\s+/).filter((x) => x)
      .filter((x) => !options.some(([k]) => x.split("=")[0] === k));
    $("#f-options").value = [...had, ...options.map(([k, v]) => `${k}=${v}`)].join(" ");
  }
  renderForm();
}

/** Shows the form or the TOML text. */
function setMode(mode) {
  form.mode = mode;
  $("#new-fields").hidden = mode !== "form";
  $("#new-text").hidden = mode !== "toml";
  $("#new-mode-form").setAttribute("aria-selected", String(mode === "form"));
  $("#new-mode-toml").setAttribute("aria-selected", String(mode === "toml"));
}

/** Clears the errors shown beside fields. */
function clearErrors() {
  for (const e of document.querySelectorAll("#new-form .field-error")) e.remove();
  for (const e of document.querySelectorAll("#new-form [aria-invalid]")) e.removeAttribute("aria-invalid");
  $("#new-error").textContent = "";
}

/** Shows `message` beside the field of the key it names (`file:line: key: why`), if the
 *  form has one, and below the form. */
function showError(message) {
  $("#new-error").textContent = message;
  if (form.mode !== "form") return;
  const named = message.match(/^[^\n:]*(?::\d+)?: ((?:engine\[\d+\]|[a-z0-9_-]+)(?:\.[a-z0-9_-]+)*):/);
  if (!named) return;
  const key = named[1];
  let target = null;
  const engine = key.match(/^engine\[(\d+)\](?:\.([a-z0-9_-]+))?/);
  if (engine) {
    const row = document.querySelectorAll("#f-engines tbody tr")[Number(engine[1])];
    target = row && (row.querySelector(`[data-field="${engine[2]}"]`) ?? row.querySelector("input"));
  } else {
    // The field of the key itself, or of the longest key it is within.
    let best = "";
    for (const label of document.querySelectorAll("#new-fields [data-key]")) {
      const k = label.dataset.key;
      if ((key === k || key.startsWith(k + ".")) && k.length > best.length && !label.hidden) {
        best = k;
        target = label.querySelector("input, select, textarea") ?? label;
      }
    }
  }
  if (!target) return;
  target.setAttribute("aria-invalid", "true");
  target.insertAdjacentElement("afterend", el("span", { class: "field-error error", role: "alert" }, message.replace(/^[^\n:]*(?::\d+)?: /, "")));
  target.focus?.();
}

/** The registered versions, for the engines' version fields. */
async function loadVersions() {
  const answer = await fetch("/api/v1/versions");
  if (!answer.ok) return;
  form.versions = await answer.json();
  showLinePresets();
  $("#f-versions").replaceChildren(...form.versions.map((v) =>
    el("option", { value: v.name }, v.parent ? `${v.name} (from ${v.parent})` : v.name)));
}

/** Sets the form from a tournament's settings (as the coordinator parsed its file). */
function fillForm(c) {
  const set = (id, v) => { $(id).value = v ?? ""; };
  set("#f-name", c.name);
  set("#f-game", c.game);
  set("#f-size", c.rules?.size ?? "10");
  set("#f-format", c.format);
  if (c.sprt) {
    set("#f-elo0", c.sprt.elo0); set("#f-elo1", c.sprt.elo1); set("#f-alpha", c.sprt.alpha);
    set("#f-beta", c.sprt.beta); set("#f-model", c.sprt.model); set("#f-max-pairs", c.sprt.max_pairs);
    const preset = `${c.sprt.elo0},${c.sprt.elo1}`;
    $("#f-preset").value = [...$("#f-preset").options].some((o) => o.value === preset) ? preset : "";
  }
  set("#f-pairs", c.pairs ?? 100);
  set("#f-rounds", c.rounds ?? 1);
  set("#f-seeds", c.seeds ?? 1);
  set("#f-tiebreak", c.tiebreak_pairs ?? 1);
  const o = c.openings ?? {};
  $("#f-openings-kind").value = o.file ? "file" : "generated";
  form.openingsFile = null;
  // An openings file named by sha256 (a preset's book) is on the coordinator already.
  form.book = /^[0-9a-f]{64}$/.test(o.file ?? "") ? o.file : null;
  set("#f-plies", o.plies); set("#f-seed", o.seed);
  set("#f-openings-format", o.format); set("#f-openings-order", o.order ?? "sequential");
  const l = c.limits ?? {};
  set("#f-tc", l.tc); set("#f-movetime", l.movetime); set("#f-nodes", l.nodes); set("#f-depth", l.depth);
  const a = c.adjudication ?? {};
  set("#f-max-plies", a.max_plies);
  set("#f-resign-score", a.resign?.score); set("#f-resign-moves", a.resign?.moves);
  set("#f-draw-score", a.draw?.score); set("#f-draw-moves", a.draw?.moves);
  set("#f-priority", c.priority); set("#f-weight", c.weight); set("#f-threads", c.threads);
  const options = (c.engines ?? c.engine ?? []).find((e) => Object.keys(e.options ?? {}).length)?.options ?? {};
  set("#f-options", Object.entries(options).map(([k, v]) => `${k}=${v}`).join(" "));
  if (c.spsa) {
    set("#f-spsa-pairs", c.spsa.pairs);
    set("#f-verify", c.spsa.verify ? `${c.spsa.verify.elo0},${c.spsa.verify.elo1}` : "");
    set("#f-spsa-params", (c.spsa.param ?? c.spsa.params ?? [])
      .map((p) => [p.name, p.start, p.min, p.max, p.c_end, p.r_end].join(" ")).join("\n"));
  }
  const rows = (c.engines ?? c.engine ?? []).map((e) => {
    const kind = e.version ? "version" : e.git ? "source" : "player";
    const name = e.version && e.name === e.version ? "" : e.name;
    return engineRow(kind, { ...e, name });
  });
  $("#f-engines tbody").replaceChildren(...rows);
  renderForm();
}

/** Opens the dialog: empty (two engines, the form), or with a test's file to clone. */
function openNewTest(clone) {
  clearErrors();
  loadVersions();
  if (clone) {
    $("#new-name").value = clone.file;
    $("#new-toml").value = clone.toml;
    if (clone.config) fillForm(clone.config);
    // The file as it was keeps every key; the form holds the ones it knows.
    setMode("toml");
  } else {
    setMode("form");
    if (!$("#f-engines tbody").children.length) {
      $("#f-engines tbody").append(engineRow("version"), engineRow("version"));
    }
    renderForm();
  }
  $("#new-test").showModal();
}

/** `tc` six times as long, fishtest's STC 10+0.1 to LTC 60+0.6; "" when it is no clock. */
function longerClock(tc) {
  const m = /^(?:(\d+)\/)?([\d.]+)(?:\+([\d.]+))?$/.exec(tc ?? "");
  if (!m) return "";
  const times = (x) => String(Number((Number(x) * 6).toFixed(3)));
  return `${m[1] ? m[1] + "/" : ""}${times(m[2])}${m[3] === undefined ? "" : "+" + times(m[3])}`;
}

/**
 * Opens the dialog on test `id` rescheduled as its LTC (`tourney clone ID --tc ... --preset
 * ltc` on the command line): the form, its clock (if it has one) six times as long, the LTC
 * bounds and " LTC" after its name, to check and submit. Returns an error to show, if any.
 */
async function rescheduleAsLtc(id) {
  const answer = await fetch(`/api/v1/tournaments/${id}/file`);
  const file = await answer.json();
  if (!answer.ok) return file.error ?? `failed (${answer.status})`;
  const c = file.config;
  if (!c || !c.sprt) { openNewTest(file); return null; }
  c.name = `${c.name} LTC`;
  const tc = longerClock(c.limits?.tc);
  if (tc) c.limits = { ...c.limits, tc };
  c.sprt = { ...c.sprt, elo0: 0.5, elo1: 2.5 };
  openNewTest({ ...file, config: c });
  setMode("form");
  renderForm();
  return null;
}

// Reschedule as LTC beside Clone, for a finished SPRT that accepted H1: app.js's
// renderActions, which shows a test's buttons, extended.
const renderActionsBeforeReschedule = renderActions;
renderActions = (t) => {
  renderActionsBeforeReschedule(t);
  $("#action-reschedule").hidden = $("#action-clone").hidden || t.state !== "finished" ||
    t.report?.sprt?.status?.decision !== "H1 accepted";
  $("#action-reschedule").onclick = async () => {
    $("#action-result").textContent = (await rescheduleAsLtc(t.id)) ?? "";
  };
};

$("#new-open").addEventListener("click", () => openNewTest(null));
$("#new-cancel").addEventListener("click", () => $("#new-test").close());
$("#new-mode-form").addEventListener("click", () => { setMode("form"); renderForm(); });
$("#new-mode-toml").addEventListener("click", () => setMode("toml"));
$("#new-to-toml").addEventListener("click", () => {
  $("#new-toml").value = formToml();
  $("#new-name").value = `${$("#f-name").value.trim() || "test"}.toml`;
  setMode("toml");
});
$("#f-engine-add").addEventListener("click", () => { $("#f-engines tbody").append(engineRow("version")); renderForm(); });
$("#f-preset").addEventListener("change", () => {
  const [elo0, elo1] = $("#f-preset").value.split(",");
  if (elo1 !== undefined) { $("#f-elo0").value = elo0; $("#f-elo1").value = elo1; }
  renderForm();
});
for (const id of ["#f-elo0", "#f-elo1"]) $(id).addEventListener("input", () => { $("#f-preset").value = ""; });
$("#f-openings-file").addEventListener("change", () => { form.openingsFile = $("#f-openings-file").files[0] ?? null; renderForm(); });
$("#f-line-preset").addEventListener("change", () => {
  const chosen = firstVersion()?.presets?.[$("#f-line-preset").value];
  if (chosen) applyLinePreset(chosen);
  renderForm();
});
$("#new-fields").addEventListener("input", renderForm);
$("#new-fields").addEventListener("change", renderForm);
$("#new-file").addEventListener("change", async () => {
  const file = $("#new-file").files[0];
  if (!file) return;
  $("#new-name").value = file.name;
  $("#new-toml").value = await file.text();
});
$("#new-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  clearErrors();
  const fromForm = form.mode === "form";
  const openings = fromForm ? form.openingsFile : $("#new-openings").files[0];
  const body = {
    file: fromForm ? `${$("#f-name").value.trim() || "test"}.toml` : $("#new-name").value,
    toml: fromForm ? formToml() : $("#new-toml").value,
    openings: openings ? await openings.text() : "",
  };
  const done = await act("/api/v1/tournaments", body);
  if (done.error) {
    showError(done.error);
    return;
  }
  $("#new-test").close();
  location.hash = `t=${done.id}`;
});
