// The page of `scat serve`: a start form, the table, replays and results.
// Everything it shows comes from the JSON API (docs/WEB_API.md); the server decides what is
// legal (STATE.legal) and sends only what the person's seat may know. Names and texts from
// the server go in with textContent, never as HTML.

import { backEl, cardEl, cardRow, cardText, parseCard, typedCard } from "./cards.js";

const $ = (id) => document.getElementById(id);
const SPEEDS = [
  { ms: 0, text: "instant" }, { ms: 300, text: "fast" }, { ms: 750, text: "normal" },
  { ms: 1300, text: "slow" }, { ms: 2200, text: "very slow" },
];
// Action ids as the server numbers them (GET /api/options "actions", scat_env.actions),
// filled by loadOptions() before any view opens.
const ACTION = {};
const GOLF = {};
// The opponents' choice that plays the level picked (no agent spec has a space).
const LEVEL = "as level";

const page = {
  options: null,
  game: null,          // the latest STATE from the server
  busy: false,         // a request or the opponents' moves are being shown
  typed: "",           // keys typed towards a card ("kh", "10h")
  lastAction: {},      // seat -> text of its last move this hand
  continueShowdown: null,
  replay: null,
  replayStep: 0,       // the frame of the replay shown (replayFrames)
  replayFrames: null,
  replayTimer: null,   // the replay stepping on by itself
  replayGame: null,    // the server's id of the game replayed (null: a file opened here)
  showAll: true,       // the replay shows every hand (off: what the person saw)
  review: null,        // {id, data | null}: the review shown beside the replay
  gameOverSeen: false, // a game ended on this page since the options were read
  metrics: { load: null, moves: [] },
};
window.scatMetrics = page.metrics;

// -- helpers ----------------------------------------------------------------------------
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function say(text, kind = "error") {
  const m = $("message");
  m.textContent = text || "";
  m.dataset.kind = text ? kind : "";
}

async function api(method, path, body, raw = false) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = raw ? body : JSON.stringify(body);
  }
  const started = performance.now();
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new Error("The server does not answer: is scat serve still running? "
      + "Start it again and reload; your games are saved.");
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) {
    throw new Error((data && data.error) || `the server answered ${res.status}`);
  }
  const timing = /dur=([\d.]+)/.exec(res.headers.get("Server-Timing") || "");
  return { data, ms: performance.now() - started, serverMs: timing ? Number(timing[1]) : null };
}

/** A touch screen, where no keyboard is at hand (a phone, a tablet): the page names no keys
 * there and says "tap" where it says "click". Asked each time: a tablet may get a mouse. */
function touchScreen() {
  return matchMedia("(pointer: coarse)").matches || matchMedia("(hover: none)").matches;
}

/** " (s)" after a move the key `k` makes, or nothing on a touch screen. */
const keyHint = (k) => (touchScreen() ? "" : ` (${k})`);
const click = () => (touchScreen() ? "tap" : "click");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const speedMs = () => SPEEDS[Number($("speed").value)]?.ms ?? 750;

function show(view) {
  if (view !== "replay" && page.replayTimer) stopReplay();
  // a replay is shown on the game table, its controls above it
  const shown = view === "replay" ? ["view-replay", "view-table"] : [`view-${view}`];
  for (const v of document.querySelectorAll(".view")) v.hidden = !shown.includes(v.id);
  document.body.dataset.view = view;
  if (view !== "replay") showReviewPanel(false);
}

function nameOf(state, seat) {
  const p = state.players[seat];
  return p ? p.name : `seat ${seat}`;
}

// -- routing: #new, #game=ID, #replay=ID, #review=ID, #results ----------------------------
let ignoreHash = null;

function setHash(hash) {
  if (location.hash !== hash) {
    ignoreHash = hash;
    location.hash = hash;
  }
}

// The options (presets, agents, action ids), fetched once: every view reads the action ids.
async function loadOptions() {
  if (!page.options) {
    const o = (await api("GET", "/api/options")).data;
    const a = o.actions;
    Object.assign(ACTION, { STOCK: a.DRAW_STOCK, TAKE: a.DRAW_DISCARD, KNOCK: a.KNOCK,
      END_PLAY: a.END_PLAY, HAMMER: a.HAMMER });
    Object.assign(GOLF, { PLACE: a.PLACE_SLOT, TURN_UP: a.TURN_UP });
    page.options = o;
  }
  return page.options;
}

async function route() {
  const hash = location.hash;
  if (ignoreHash === hash) {
    ignoreHash = null;
    return;
  }
  say("");
  const m = /^#(game|replay|review)=([A-Za-z0-9_-]{1,64})$/.exec(hash);
  try {
    await loadOptions();
    if (m && m[1] === "game") await openGame(m[2]);
    else if (m && m[1] === "replay") await openReplay(m[2]);
    else if (m && m[1] === "review") await openReplay(m[2], true);
    else if (hash === "#results") await openResults();
    else await openStart();
  } catch (err) {
    say(err.message);
    if (!document.body.dataset.view || document.body.dataset.view === "loading") {
      await openStart();
    }
  }
}

// -- the start form ----------------------------------------------------------------------
async function openStart() {
  show("new");
  const o = await loadOptions();
  const form = $("start-form");
  if (!form.dataset.filled) {
    form.dataset.filled = "1";
    $("f-players").min = o.min_players;
    $("f-players").max = o.max_players;
    $("f-players").value = o.default_players;
    const opp = $("f-opponents");
    // LEVEL sends the level picked above: its agent sits in every seat; "" sends neither
    // level nor opponents: the server seats its shipped policy where that policy can play
    // the table (players, rules) and the expert elsewhere
    const byLevel = el("option", null, "As the level above");
    byLevel.value = LEVEL;
    const best = el("option", null, "The best the server has for this table (trained policy)");
    best.value = "";
    opp.append(byLevel, best, ...agentOptions(o.agents));
    opp.value = LEVEL;
    levelChoices(o);
    const rules = $("f-rules");
    for (const p of o.presets) {
      // the usual length beside the name: a race to points lasts ten times a standard game
      const usual = p.minutes ? ` (${Math.max(1, Math.round(p.minutes.median))} min)` : "";
      const opt = el("option", null, p.name.replaceAll("_", " ") + usual);
      opt.value = p.name;
      rules.append(opt);
    }
    rules.value = o.default_rules;
    showNotes();
  } else if (page.gameOverSeen && !form.dataset.levelPicked) {
    // the first game's level is offered until a game is over: this page has seen one end
    // since it read the options, so the server's default level may have moved on
    page.gameOverSeen = false;
    try {
      const fresh = (await api("GET", "/api/options")).data;
      page.options.default_level = fresh.default_level;
      pickLevel(fresh.default_level);
    } catch {
      // the level shown stays; the person may pick another
    }
  }
  refreshGames();
}

/** The levels as radio buttons, each with its line: what it is and how it measured
 * ("hard: the trained AI; wins 44% against two medium; a beginner beats it 21%"). The
 * server's default level is picked: the first game's until a game is over. */
function levelChoices(o) {
  const box = $("f-levels");
  box.replaceChildren();
  for (const lv of o.levels || []) {
    const label = el("label", "check level");
    const radio = el("input");
    radio.type = "radio";
    radio.name = "level";
    radio.value = lv.name;
    radio.id = `f-level-${lv.name}`;
    const prefix = `${lv.name}: `;
    const rest = lv.line.startsWith(prefix) ? lv.line.slice(prefix.length) : lv.line;
    const text = el("span", "level-line");
    text.append(el("b", null, lv.name), `: ${rest}`);
    label.append(radio, text);
    box.append(label);
  }
  $("f-level").hidden = !(o.levels || []).length;
  pickLevel(o.default_level);
}

function pickLevel(name) {
  const radio = document.querySelector(`#f-levels input[value="${CSS.escape(name || "")}"]`);
  if (radio) radio.checked = true;
}

function chosenLevel() {
  const radio = document.querySelector("#f-levels input:checked");
  return radio ? radio.value : undefined;
}

/** Opponents chosen otherwise (the server's best, one spec for all, or each seat's) play
 * instead of a level: the level picker is greyed out and says so. */
function showLevelInUse() {
  const bySpec = $("f-each").checked || $("f-opponents").value !== LEVEL;
  $("f-level").disabled = bySpec;
  $("f-level").classList.toggle("unused", bySpec);
  $("f-level-note").hidden = !bySpec;
}

function agentOptions(agents) {
  return agents.map((a) => {
    const opt = el("option", null, a.label);
    opt.value = a.spec;
    return opt;
  });
}

/** One select per opponent seat when "Choose each opponent" is ticked; each starts at the
 * opponent chosen above (the server's default opponent when that is "the best"). */
function showSeatChoices() {
  const box = $("f-seats");
  const each = $("f-each").checked;
  box.hidden = !each;
  $("f-opponents-label").hidden = each;
  if (!each) return;
  const o = page.options;
  const n = Math.max(o.min_players, Math.min(o.max_players, Number($("f-players").value) || 0));
  const kept = [...box.querySelectorAll("select")].map((x) => x.value);
  const one = $("f-opponents").value;
  const start = one && one !== LEVEL ? one : o.default_opponent;
  box.replaceChildren();
  for (let seat = 1; seat < n; seat += 1) {
    const label = el("label", null, `Seat ${seat} `);
    const sel = el("select");
    sel.dataset.seat = seat;
    sel.append(...agentOptions(o.agents));
    sel.value = kept[seat - 1] || start;
    label.append(sel);
    box.append(label);
  }
}

function chosenOpponents() {
  if ($("f-each").checked) {
    return [...$("f-seats").querySelectorAll("select")].map((x) => x.value);
  }
  const one = $("f-opponents").value;
  return one && one !== LEVEL ? one : undefined;
}

/** Whether the level picked is what the form sends (the opponents left "as the level"). */
function byLevel() {
  return !$("f-each").checked && $("f-opponents").value === LEVEL;
}

function showNotes() {
  const p = page.options.presets.find((x) => x.name === $("f-rules").value);
  $("f-rules-notes").textContent = p
    ? `${p.notes} (${p.start_lives} ${p.lives_name}).${p.length ? ` ${p.length}` : ""}` : "";
}

async function refreshGames() {
  const list = $("games-list");
  try {
    const games = (await api("GET", "/api/games")).data.games;
    showResume(games);
    list.replaceChildren();
    if (games.length === 0) list.append(el("li", "muted", "No games yet."));
    for (const g of games.slice(0, 20)) {
      const li = el("li");
      const a = el("a", null, g.status === "over" ? "Replay" : "Continue");
      a.href = g.status === "over" ? `#replay=${g.id}` : `#game=${g.id}`;
      const who = g.names.slice(1).join(", ");
      const end = g.status === "over" ? ` · won by ${(g.winner || []).join(", ") || "nobody"}` : "";
      const against = g.level ? `level ${g.level}` : [...new Set(g.opponents)].join(", ");
      li.append(a, el("span", null,
        ` ${g.created.replace("T", " ")} · ${g.rules.replaceAll("_", " ")} · vs ${who}`
        + ` (${against})${g.teaching ? " · teaching" : ""}${end}`));
      if (g.status === "over") {
        const review = el("a", "review-link", "Review");
        review.href = `#review=${g.id}`;
        li.append(" · ", review);
      }
      list.append(li);
    }
  } catch (err) {
    list.replaceChildren(el("li", "muted", err.message));
  }
}

/** The game this browser played last, when it is not over: one click back to it. */
function showResume(games) {
  const box = $("resume");
  const last = localStorage.getItem("scat-last-game");
  const g = games.find((x) => x.id === last && x.status === "playing");
  box.hidden = !g;
  box.replaceChildren();
  if (!g) return;
  const a = el("a", "button primary", "Continue your last game");
  a.href = `#game=${g.id}`;
  a.id = "resume-link";
  box.append(a, el("span", "muted", ` vs ${g.names.slice(1).join(", ")}, `
    + `${g.rules.replaceAll("_", " ")} rules`));
}

async function startGame(ev) {
  ev.preventDefault();
  if (page.busy) return;
  const players = Number($("f-players").value);
  const body = {
    players, rules: $("f-rules").value,
    name: $("f-name").value.trim() || "You", teaching: $("f-teaching").checked,
  };
  const opponents = chosenOpponents();
  if (opponents !== undefined) body.opponents = opponents;
  else if (byLevel() && chosenLevel() !== undefined) body.level = chosenLevel();
  if (!Number.isInteger(players) || players < page.options.min_players
      || players > page.options.max_players) {
    say(`Players must be a whole number from ${page.options.min_players} to `
        + `${page.options.max_players}.`);
    return;
  }
  page.busy = true;
  markReady(false);
  try {
    const { data } = await api("POST", "/api/games", body);
    say("");
    setHash(`#game=${data.game.id}`);
    // named at once: the opponents' first moves may end a hand, and its showdown waits for
    // the person before the game is marked ready
    document.body.dataset.game = data.game.id;
    localStorage.setItem("scat-last-game", data.game.id);
    show("table");
    page.game = null;
    page.lastAction = {};
    $("log").replaceChildren();
    hidePanels();
    // the table as dealt: the person's cards are theirs to see while the others move; no
    // card known yet, every golf slot face down (the opponents' first moves turn them up)
    const empty = { ...data.game, discard_pile: [], top_discard: null, events: [], legal: [],
      players: data.game.players.map((p) => ({ ...p, known: [],
        slots: (p.slots || []).map(() => null) })) };
    render(empty);
    await animate(empty, data.game, data.game.events);
    page.game = data.game;
    render(data.game);
  } catch (err) {
    say(err.message);
  } finally {
    page.busy = false;
    markReady(true);
  }
}

// -- the table ---------------------------------------------------------------------------
async function openGame(id) {
  show("table");
  markReady(false);
  hidePanels();
  const { data } = await api("GET", `/api/games/${encodeURIComponent(id)}`);
  localStorage.setItem("scat-last-game", data.game.id);
  rebuild(data.game);
  if (page.metrics.load === null) page.metrics.load = performance.now();
  markReady(true);
}

/** The table and this hand's log drawn afresh from `game` (a reload, or a move the server
 * refused because the game had moved on in another tab). */
function rebuild(game) {
  page.game = game;
  page.lastAction = {};
  $("log").replaceChildren();
  for (const e of game.events) logEvent(e, game);
  render(game);
  if (game.status === "over") showGameOver(game);
}

function markReady(ready) {
  const b = document.body.dataset;
  b.ready = ready ? "1" : "0";
  if (page.game) {
    b.seq = page.game.seq;
    b.phase = page.game.phase;
    b.status = page.game.status;
    b.game = page.game.id;
  }
}

function hidePanels() {
  for (const id of ["hint", "showdown", "gameover"]) $(id).hidden = true;
}

function seatEl(seat) {
  return seat === 0 ? $("hand") : document.querySelector(`#opponents [data-seat="${seat}"] .cards`);
}

function badges(state, p) {
  const out = [];
  if (p.seat === state.dealer) out.push(["dealer", "dealer"]);
  if (p.seat === state.knocker) out.push(["knocked", "knocked"]);
  if (p.out) out.push(["out", "out"]);
  if (state.status === "over" && (state.winner || []).includes(p.seat)) out.push(["winner", "winner"]);
  const span = el("span", "badges");
  for (const [cls, text] of out) span.append(el("span", `badge ${cls}`, text));
  return span;
}

/** The turn being played counted from 1, as the terminal's title counts it (STATE.turn
 * counts the turns finished). */
function turnNumber(s) {
  const playing = ["draw", "discard", "golf_draw", "golf_place"].includes(s.phase);
  return playing ? s.turn + 1 : s.turn;
}

/** Draws `state` on the table (no animation). */
function render(state) {
  const s = state;
  const knocker = s.knocker !== null && s.knocker !== undefined ? ` · ${nameOf(s, s.knocker)} knocked` : "";
  $("t-title").textContent = `${s.rules.name.replaceAll("_", " ")} rules · hand ${s.hand_number}`
    + ` · turn ${turnNumber(s)} · ${nameOf(s, s.dealer)} ${s.dealer === s.you ? "deal" : "deals"}${knocker}`;
  $("t-teaching").hidden = !s.teaching;
  $("t-level").hidden = !s.level;
  $("t-level").textContent = s.level ? `Level: ${s.level}` : "";
  document.body.classList.toggle("teaching", !!s.teaching);

  const opp = $("opponents");
  opp.replaceChildren();
  for (const p of s.players) {
    if (p.seat === s.you) continue;
    const box = el("div", "seat opponent");
    box.dataset.seat = p.seat;
    if (p.out) box.classList.add("is-out");
    if (s.to_move === p.seat) box.classList.add("to-move");
    const head = el("div", "seat-head");
    head.append(el("b", "name", p.name));
    if (p.label) head.append(el("span", "agent", ` (${p.label})`));
    head.append(badges(s, p));
    const lives = el("div", "lives", scoreText(s, p));
    lives.dataset.lives = p.lives;
    if (p.lives <= 1 && !hasPoints(s)) lives.classList.add("low");
    const cards = el("div", "cards");
    if (!p.out) cards.append(...opponentCards(s, p));
    const known = el("div", "known");
    if (p.known.length && !p.hand && !p.out) {
      known.append(el("span", "muted", isGolf(s) ? `${p.known.length} face up`
        : `${p.known.length} known (from the pile)`));
    }
    const last = el("div", "last-action", page.lastAction[p.seat] || "");
    box.append(head);
    // how strong this seat's policy is, as the model card measured it (null if it was not)
    if (p.strength) box.append(el("div", "strength", p.strength));
    box.append(lives, cards, known, last);
    opp.append(box);
  }

  const me = s.players[s.you];
  $("me-name").textContent = me.name;
  $("me-badges").replaceChildren(badges(s, me));
  $("me-lives").textContent = scoreText(s, me);
  $("me-lives").classList.toggle("low", me.lives <= 1 && !hasPoints(s));
  $("me").classList.toggle("to-move", s.to_move === s.you && s.status === "playing");

  const legal = new Map(s.legal.map((m) => [m.action, m]));
  const hand = $("hand");
  hand.replaceChildren(...(isGolf(s) ? golfHand(s, me) : handCards(s)));
  $("hand-value").textContent = s.hand_value !== null && s.hand_value !== undefined
    ? `Worth ${s.hand_value}` : (s.phase === "discard" ? "Four cards: discard one" : "");

  setPiles(s.discard_pile, s.stock);
  $("stock").classList.toggle("playable", legal.has(ACTION.STOCK));
  $("discard").classList.toggle("playable", legal.has(ACTION.TAKE));

  $("prompt").textContent = promptFor(s);
  const actions = $("actions");
  actions.replaceChildren();
  for (const m of s.legal) {
    if (m.action < 52) continue;
    const b = el("button", m.action === ACTION.KNOCK ? "action knock" : "action");
    b.type = "button";
    b.dataset.action = m.action;
    if (!touchScreen()) b.append(el("kbd", null, m.key), " ");
    b.append(m.label);
    actions.append(b);
  }
  $("hint-button").hidden = !(s.status === "playing" && s.legal.length);
  $("last-result-button").hidden = !s.result;
  document.body.dataset.phase = s.phase;
  $("keys").hidden = isGolf(s) || touchScreen();
  $("keys-golf").hidden = !isGolf(s) || touchScreen();
  $("hint-button").textContent = `Hint${keyHint("h")}`;
}

/** A race to points shows points where a lives game shows lives. */
function hasPoints(s) {
  return s.players.some((p) => p.points !== undefined && p.points !== null);
}

function scoreText(s, p) {
  if (p.points_text) return p.points_text;
  if (p.points === undefined || p.points === null) return p.lives_text;
  return pointsText(s, p.points);
}

/** "12 of 31 points", as the server's points_text writes it. */
function pointsText(s, points) {
  const goal = s.rules.points_to_win;
  return goal ? `${points} of ${goal} point${goal === 1 ? "" : "s"}` : `${points} points`;
}

/** A race's showdown: every seat's points at the table as the hand left them (a lives
 * game's lives are in the showdown's "Now" column, in the preset's words only at the end). */
function showPoints(result, state) {
  if (!result.points_after) return;
  result.points_after.forEach((points, seat) => {
    const box = seat === state.you ? $("me-lives")
      : document.querySelector(`#opponents [data-seat="${seat}"] .lives`);
    if (box) box.textContent = pointsText(state, points);
  });
}

/** Golf: three slots a player turns face up one a turn, instead of a hand of three. */
function isGolf(s) {
  return s.rules.play === "golf" || String(s.phase).startsWith("golf")
    || s.players.some((p) => Array.isArray(p.slots) && p.slots.length > 0);
}

/** An opponent's cards as the person may see them: the hand in a teaching game, golf's
 * slots, else the cards it is known to hold (taken from the pile) face up, the rest face
 * down, as many as it holds (`held`: one each while sudden death is decided). */
function opponentCards(s, p) {
  const small = { small: true };
  if (p.hand) return p.hand.map((c) => cardEl(c, small));
  if (Array.isArray(p.slots) && p.slots.length) return p.slots.map((c, i) => slotCard(c, i, false));
  const out = p.known.map((c) => {
    const k = cardEl(c, small);
    k.classList.add("known");
    k.title = isGolf(s) ? "face up" : "taken from the discard pile: everyone saw it";
    return k;
  });
  while (out.length < (p.held ?? 3)) out.push(backEl(small));
  return out;
}

/** The person's hand as buttons: a click discards a card the rules allow. Before the
 * person has looked (a throw-down, sudden death) the cards held lie face down. */
function handCards(s) {
  const out = [];
  for (const c of s.hand) {
    const b = cardEl(c, { tag: "button" });
    b.type = "button";
    const move = s.legal.find((m) => m.key === c.toLowerCase() && m.action < 52);
    if (move) {
      b.classList.add("playable");
      b.title = `${move.label} (keeps ${move.value})`;
    }
    if (c === s.drawn) b.classList.add("drawn");
    if (c === s.taken) b.classList.add("taken");
    out.push(b);
  }
  if (s.hand.length === 0 && s.status === "playing") {
    const held = s.players[s.you].held ?? 3;
    for (let i = 0; i < held; i += 1) out.push(backEl());
  }
  return out;
}

/** Golf: the person's three slots (a click puts the card held into a face-down one) and
 * the card held this turn. Without the slots in STATE, the face-up cards come first. */
function golfHand(s, me) {
  if (me.out) return s.hand.map((c) => cardEl(c));  // no slots: the hand it went out with
  const held = s.drawn || s.taken;
  const slots = Array.isArray(me.slots) && me.slots.length ? me.slots : (() => {
    const up = s.hand.filter((c) => c !== held);
    return [...up, ...Array(Math.max(0, 3 - up.length)).fill(null)];
  })();
  const out = slots.map((c, i) => {
    const slot = slotCard(c, i, true);
    const place = s.legal.find((m) => m.action === GOLF.PLACE + i);
    if (place && !c) {
      slot.classList.add("playable");
      slot.title = place.label;
    }
    return slot;
  });
  if (held) {
    const h = cardEl(held);
    h.classList.add("held", "drawn");
    const box = el("span", "held-box");
    box.append(el("span", "held-label", "holding"), h);
    out.push(box);
  }
  return out;
}

/** Golf: slot `i` holding `card` (null: face down). The person's own are buttons (a click
 * puts the card held there); an opponent's are small. */
function slotCard(card, i, own) {
  const small = { small: true };
  const slot = own ? (card ? cardEl(card, { tag: "button" }) : el("button", "card back"))
    : (card ? cardEl(card, small) : backEl(small));
  if (own) slot.type = "button";
  slot.classList.add("slot");
  slot.dataset.slot = i;
  return slot;
}

/** Golf: slot `i` of `seat` on the table, or null (a seat that is out, a teaching game's
 * opponent shown by its hand). */
function slotEl(state, seat, i) {
  const box = seat === state.you ? $("hand") : seatEl(seat);
  return box ? box.querySelector(`[data-slot="${i}"]`) : null;
}

/** The prompt at the start of a turn, naming only the moves on offer (`STATE.legal`): no
 * knock after another player's knock or where the rules forbid one, no stock once it is
 * exhausted. */
function drawPrompt(s) {
  const has = (action) => s.legal.some((m) => m.action === action);
  const choices = [];
  if (has(ACTION.STOCK)) {
    choices.push(has(ACTION.TAKE) ? "draw a card (stock or discard pile)" : "draw from the stock");
  } else if (has(ACTION.TAKE)) {
    choices.push("take the top discard");
  }
  if (has(ACTION.KNOCK)) choices.push("knock");
  if (has(ACTION.END_PLAY)) choices.push("end the play");
  if (has(ACTION.HAMMER)) choices.push("call a hammer");
  const said = choices.length > 1
    ? `${choices.slice(0, -1).join(", ")}, or ${choices[choices.length - 1]}`
    : choices[0] || "choose a move below";
  const last = s.knocker !== null && s.knocker !== undefined;
  return `${last ? "Your last turn" : "Your turn"}: ${said}.`;
}

function promptFor(s) {
  if (s.status === "over") return "The game is over.";
  if (!s.legal.length) return "The other players are moving.";
  if (s.phase === "draw") return drawPrompt(s);
  if (s.phase === "discard") {
    const how = touchScreen() ? "tap it" : "click it, or type it like kh and Enter";
    return s.taken ? `Now discard a card: ${how} (not the ${cardText(s.taken)} you took).`
      : `Now discard a card: ${how}.`;
  }
  if (s.phase === "golf_draw") {
    return "Your turn: draw from the stock, or take the top discard into a slot.";
  }
  if (s.phase === "golf_place") {
    return s.taken ? `Put the card you took face up in a face-down slot: ${click()} the slot.`
      : `${click() === "tap" ? "Tap" : "Click"} a face-down slot to put the card there, or `
        + "discard it and turn a slot up (buttons below).";
  }
  if (s.phase === "blind") return "Throw-down: call it blind, or look at your cards.";
  if (s.phase === "sudden_death") return "You deal: call sudden death, or deal on.";
  if (s.phase === "declare") return "You hold 31: declare it, or keep quiet.";
  return "Your move.";
}

function setPiles(pile, stock) {
  const d = $("discard");
  d.replaceChildren();
  const top = pile.length ? pile[pile.length - 1] : null;
  if (top) d.append(cardEl(top));
  else d.append(el("span", "card empty", "empty"));
  d.dataset.top = top || "";
  $("stock-count").textContent = stock === null || stock === undefined ? "?" : stock;
  $("stock").querySelector(".card").classList.toggle("gone", stock === 0);
}

/** Adds `e` to this hand's log, scrolled into sight unless `scroll` is false (a replay
 * redraws the whole log at each step and scrolls it once). */
function logEvent(e, state, scroll = true) {
  const li = el("li", `ev ev-${e.kind}`);
  li.append(el("span", null, e.text));
  if (e.why) li.append(el("span", "why", ` ${e.why}`));
  if (e.kind === "deal") {
    $("log").replaceChildren();
    page.lastAction = {};
  }
  $("log").append(li);
  if (scroll) li.scrollIntoView({ block: "nearest" });
  if (e.seat !== null && e.seat !== undefined && e.kind !== "deal" && e.kind !== "game_over"
      && state && e.seat !== state.you) {
    const prefix = `${nameOf(state, e.seat)} `;
    page.lastAction[e.seat] = e.kind === "knock" ? "knocked."
      : (e.text.startsWith(prefix) ? e.text.slice(prefix.length) : e.text);
  }
}

/** The card an event puts on the discard pile: a discard's card, and in golf the card a
 * `place` takes out of its slot or the card drawn that a `turn_up` discards. */
function discardedBy(e) {
  if (e.kind === "discard") return e.card;
  if (e.kind === "place" || e.kind === "turn_up") return e.discarded;
  return null;
}

/** The pile and stock after each event: forward from `prev` up to the last deal, then
 * backward from `next` (which is exact for the hand being played). */
function snapshots(prev, next, events) {
  const out = new Array(events.length);
  let lastDeal = -1;
  events.forEach((e, i) => { if (e.kind === "deal") lastDeal = i; });
  let pile = [...prev.discard_pile];
  let stock = prev.stock;
  for (let i = 0; i < lastDeal; i += 1) {
    const e = events[i];
    if (e.kind === "deal") { pile = []; stock = null; }
    if (discardedBy(e)) pile.push(discardedBy(e));
    if (e.kind === "draw_discard") pile.pop();
    if (e.kind === "draw_stock" && stock !== null) stock -= 1;
    out[i] = { pile: [...pile], stock };
  }
  pile = [...next.discard_pile];
  stock = next.stock;
  for (let i = events.length - 1; i >= Math.max(lastDeal, 0); i -= 1) {
    out[i] = { pile: [...pile], stock };
    const e = events[i];
    if (discardedBy(e)) pile.pop();
    if (e.kind === "draw_discard") pile.push(e.card);
    if (e.kind === "draw_stock") stock += 1;
  }
  return out;
}

async function fly(from, to, card, ms) {
  if (!from || !to || ms <= 0) return;
  const a = from.getBoundingClientRect();
  const b = to.getBoundingClientRect();
  const moving = card ? cardEl(card) : backEl();
  moving.classList.add("flying");
  $("fly-layer").append(moving);
  const size = moving.getBoundingClientRect();
  moving.style.left = `${a.left + a.width / 2 - size.width / 2}px`;
  moving.style.top = `${a.top + a.height / 2 - size.height / 2}px`;
  moving.getBoundingClientRect();  // start the transition from here
  moving.style.transition = `transform ${ms}ms ease-in-out`;
  const dx = (b.left + b.width / 2) - (a.left + a.width / 2);
  const dy = (b.top + b.height / 2) - (a.top + a.height / 2);
  moving.style.transform = `translate(${dx}px, ${dy}px)`;
  await sleep(ms);
  moving.remove();
}

/** Golf at the table: a `place` flies the card held into its slot and the card that lay
 * there onto the pile; a `turn_up` flies the card drawn onto the pile and turns the slot
 * face up. The slot shows its card from then on, the person's own included, so a showdown
 * that follows shows the slots as they ended. */
async function golfMove(e, state, ms) {
  const own = e.seat === state.you;
  const slot = slotEl(state, e.seat, e.slot);
  const held = own ? $("hand").querySelector(".held-box .card") : null;
  const from = held || seatEl(e.seat);
  if (held) held.classList.add("leaving");
  if (e.kind === "place") {
    await Promise.all([fly(from, slot, e.card, ms), fly(slot, $("discard"), e.discarded, ms)]);
  } else {
    await fly(from, $("discard"), e.discarded, ms);
  }
  if (own) $("hand").querySelector(".held-box")?.remove();
  if (!slot) return;
  const up = slotCard(e.card, e.slot, own);
  if (e.kind === "turn_up" && ms > 0) up.classList.add("reveal");
  slot.replaceWith(up);
  if (!own) countFaceUp(e.seat);
}

/** Golf: an opponent's "N face up" line as its slots on the table now say. */
function countFaceUp(seat) {
  const box = seatEl(seat);
  const line = box && box.parentElement.querySelector(":scope > .known");
  if (!line) return;
  const n = box.querySelectorAll("[data-slot][data-card]").length;
  line.replaceChildren(...(n ? [el("span", "muted", `${n} face up`)] : []));
}

/** Golf: a new hand's slots face down at every seat dealt in; `result` is the hand just
 * ended, whose `lives_after` says who is out (null: nobody left since the table was drawn). */
function dealSlots(state, result) {
  for (const p of state.players) {
    const own = p.seat === state.you;
    const box = own ? $("hand") : seatEl(p.seat);
    if (!box || !box.querySelector("[data-slot]")) continue;
    const out = result && result.lives_after[p.seat] === 0;
    box.replaceChildren(...(out ? [] : [0, 1, 2].map((i) => slotCard(null, i, own))));
    if (!own) countFaceUp(p.seat);
  }
}

/** Shows `events` one by one at the chosen speed, from the table of `prev` to `next`. */
async function animate(prev, next, events) {
  const snaps = snapshots(prev, next, events);
  const hand = [...prev.hand];
  let handEnded = null;  // the last hand_over's result, for who a golf deal leaves out
  if (events.some((e) => e.seat !== next.you && e.kind !== "deal")) {
    $("prompt").textContent = "The other players are moving.";
    $("hand-value").textContent = "";
    $("actions").replaceChildren();
    $("hint-button").hidden = true;
    document.querySelectorAll("#hand .card").forEach((c) => c.classList.remove("playable", "drawn"));
    for (const pile of [$("stock"), $("discard")]) pile.classList.remove("playable");
  }
  for (let i = 0; i < events.length; i += 1) {
    const e = events[i];
    const wait = speedMs();
    const flyMs = Math.min(Math.round(wait * 0.6), 600);
    document.querySelectorAll(".seat.acting").forEach((x) => x.classList.remove("acting"));
    const seatBox = e.seat === next.you ? $("me")
      : document.querySelector(`#opponents [data-seat="${e.seat}"]`);
    if (seatBox && e.kind !== "deal" && e.kind !== "game_over") seatBox.classList.add("acting");
    if (e.kind === "draw_stock") {
      // the person sees the card they drew on its way; nobody else's
      const seen = e.seat === next.you && i === events.length - 1 ? next.drawn : null;
      await fly($("stock"), seatEl(e.seat), seen, flyMs);
    }
    if (e.kind === "draw_discard") {
      const pile = snaps[i].pile;
      setPiles(pile, snaps[i].stock);
      await fly($("discard"), seatEl(e.seat), e.card, flyMs);
    }
    if (e.kind === "place" || e.kind === "turn_up") await golfMove(e, next, flyMs);
    if (e.kind === "deal" && isGolf(next)) dealSlots(next, handEnded);
    if (e.kind === "hand_over") handEnded = e.result;
    if (e.kind === "discard") {
      if (e.seat === next.you) {
        const k = hand.indexOf(e.card);
        if (k >= 0) hand.splice(k, 1);
        const from = document.querySelector(`#hand [data-card="${e.card}"]`) || $("hand");
        from.classList.add("leaving");
        await fly(from, $("discard"), e.card, flyMs);
        from.remove();
      } else {
        await fly(seatEl(e.seat), $("discard"), e.card, flyMs);
      }
    }
    logEvent(e, next);
    if (snaps[i]) setPiles(snaps[i].pile, snaps[i].stock);
    if (e.kind === "deal") {
      const title = $("t-title");
      title.textContent = e.text.replace(/\.$/, "");
    }
    const last = document.querySelector(`#opponents [data-seat="${e.seat}"] .last-action`);
    if (last && page.lastAction[e.seat]) last.textContent = page.lastAction[e.seat];
    if (e.kind === "knock" && seatBox) seatBox.classList.add("flash");
    if (e.kind === "hand_over") {
      await showShowdown(e.result, next, i === lastIndex(events, "hand_over"));
    } else if (wait > 0 && e.seat !== next.you) {
      await sleep(wait - flyMs);
    }
    if (seatBox) seatBox.classList.remove("flash");
  }
  document.querySelectorAll(".seat.acting").forEach((x) => x.classList.remove("acting"));
}

function lastIndex(list, kind) {
  let k = -1;
  list.forEach((e, i) => { if (e.kind === kind) k = i; });
  return k;
}

/** The hands a result holds, their values, what each lost and the rule; waits for the
 * person to go on when `wait` is a function's resolver slot. */
function showdownPanel(result, state, finalLives) {
  const box = el("div");
  box.append(el("h2", null, `Showdown \u00b7 hand ${result.hand_number}`));
  const table = el("table", "result");
  const head = el("tr");
  // a race to points: what each scored and where it stands, instead of lives
  const race = result.points_won !== undefined && result.points_won !== null;
  const heads = race ? ["Player", "Hand", "Value", "Scored", "Points"]
    : ["Player", "Hand", "Value", "Lost", "Now"];
  for (const h of heads) head.append(el("th", null, h));
  table.append(head);
  const seats = state.players.map((p) => p.seat);
  for (const seat of seats) {
    const key = String(seat);
    const p = state.players[seat];
    const wasIn = key in result.lives_lost || key in result.hands;
    if (!wasIn && result.lives_after[seat] === 0) continue;
    const tr = el("tr");
    tr.dataset.seat = seat;
    let who = p.name;
    if (result.knocker === seat) who += " (knocked)";
    if (result.declarers.includes(seat)) who += " (31)";
    tr.append(el("td", null, who));
    const hand = el("td");
    hand.append(result.hands[key] ? cardRow(result.hands[key]) : el("span", "muted", "not shown"));
    tr.append(hand);
    tr.append(el("td", "num", result.values[key] ?? "\u2013"));
    if (race) {
      const won = result.points_won[key] || 0;
      tr.append(el("td", won ? "num scored" : "num", won ? `+${won}` : "0"));
      tr.append(el("td", "num", (result.points_after || [])[seat] ?? "\u2013"));
      if (won) tr.classList.add("scorer");
      table.append(tr);
      continue;
    }
    const lost = result.lives_lost[key] || 0;
    tr.append(el("td", lost ? "num lost" : "num", lost ? `-${lost}` : "0"));
    const after = result.lives_after[seat];
    tr.append(nowCell(after, finalLives && state.players[seat].lives === after
      ? state.players[seat].lives_text : null));
    if (lost) tr.classList.add("loser");
    table.append(tr);
  }
  box.append(table);
  box.append(el("p", "rule", result.rule_text));
  const rest = result.text.startsWith(result.rule_text)
    ? result.text.slice(result.rule_text.length).trim() : result.text;
  if (rest) box.append(el("p", "result-text", rest));
  return box;
}

/** A showdown's "Now": the lives a hand left a seat, in the preset's `words` when given
 * ("on the county, 1 life left"), with the count alone ("1 left") beside them, which a
 * phone shows instead so that the column keeps to one line. */
function nowCell(after, words) {
  const count = after > 0 ? `${after} left` : "out";
  const td = el("td", "now");
  td.append(el("span", "now-words", words || count));
  if (words && words !== count) {
    td.classList.add("has-count");
    td.append(el("span", "now-count", count));
  }
  return td;
}

/** The opponents' hands the result shows, turned face up in their places at the table; in
 * golf every seat's slots, the person's own included, in their order. */
function revealHands(result, state) {
  for (const [seat, hand] of Object.entries(result.hands)) {
    const box = seatEl(Number(seat));
    if (!box) continue;
    if (box.querySelector("[data-slot]")) {
      revealSlots(box, hand, Number(seat) === state.you);
      if (Number(seat) !== state.you) countFaceUp(Number(seat));
      continue;
    }
    if (Number(seat) === state.you) continue;
    box.parentElement.querySelector(":scope > .known")?.replaceChildren();
    box.replaceChildren(...hand.map((c) => {
      const card = cardEl(c, { small: true });
      if (speedMs() > 0) card.classList.add("reveal");  // turned over, unless "instant"
      return card;
    }));
  }
}

/** Golf: a showdown's slots face up where they lie. Every slot is face up by the hand's end
 * under the rules; should one still show a card back, the result's cards that no slot shows
 * fill the face-down ones. Nobody holds a card at a showdown. */
function revealSlots(box, hand, own) {
  box.querySelector(".held-box")?.remove();
  const slots = [...box.querySelectorAll("[data-slot]")];
  const rest = [...hand];
  for (const slot of slots) {
    const k = rest.indexOf(slot.dataset.card);
    if (k >= 0) rest.splice(k, 1);
  }
  for (const slot of slots) {
    if (slot.dataset.card || !rest.length) continue;
    const up = slotCard(rest.shift(), Number(slot.dataset.slot), own);
    if (speedMs() > 0) up.classList.add("reveal");
    slot.replaceWith(up);
  }
}

function showShowdown(result, state, finalLives) {
  revealHands(result, state);
  showPoints(result, state);
  const panel = $("showdown");
  panel.replaceChildren(showdownPanel(result, state, finalLives));
  const go = el("button", "primary", state.status === "over" && finalLives
    ? `See the end of the game${keyHint("Enter")}` : `Next hand${keyHint("Enter")}`);
  go.type = "button";
  go.id = "showdown-continue";
  panel.append(go);
  panel.hidden = false;
  $("prompt").textContent = `Showdown: hand ${result.hand_number} is over.`;
  document.body.dataset.showdown = "1";
  panel.scrollIntoView({ block: "nearest" });
  return new Promise((resolve) => {
    page.continueShowdown = () => {
      page.continueShowdown = null;
      panel.hidden = true;
      document.body.dataset.showdown = "0";
      resolve();
    };
    go.addEventListener("click", () => page.continueShowdown && page.continueShowdown());
    go.focus({ preventScroll: true });
  });
}

function showGameOver(s) {
  page.gameOverSeen = true;
  const panel = $("gameover");
  panel.replaceChildren();
  const winners = (s.winner || []).map((w) => (w === s.you ? "You" : nameOf(s, w)));
  const you = (s.winner || []).includes(s.you);
  panel.append(el("h2", null, you ? "You win!" : `${winners.join(" and ") || "Nobody"} `
    + `win${winners.length === 1 ? "s" : ""} the game.`));
  const sm = s.summary || {};
  const dl = el("dl", "summary");
  const golf = isGolf(s);  // golf has no knocking and no 31 declared: those rows say nothing
  const rows = [
    ["Your place", sm.place ? ordinal(sm.place) : "\u2013"],
    ["Hands played", sm.hands], golf ? null : ["31s", sm.thirty_ones],
    golf ? null : ["Knocks", `${sm.knocks} (yours: ${sm.your_knocks})`],
    [hasPoints(s) ? "Hands you lost" : "Lives you lost", hasPoints(s) ? sm.your_hands_lost
      : `${sm.your_lives_lost} in ${sm.your_hands_lost} hand${sm.your_hands_lost === 1 ? "" : "s"}`],
    golf ? null : ["Your 31s", sm.your_31s],
  ].filter(Boolean);
  for (const [k, v] of rows) dl.append(el("dt", null, k), el("dd", null, v ?? "\u2013"));
  panel.append(dl);
  panel.append(standings(s));
  const again = el("div", "buttons");
  const replay = el("a", "button primary", "Replay this game");
  replay.href = `#replay=${s.id}`;
  replay.id = "open-replay";
  const review = el("a", "button", "Review this game");
  review.href = `#review=${s.id}`;
  review.id = "open-review";
  review.title = "each of your decisions played out: what it cost, and the best move";
  const next = el("a", "button", "New game");
  next.href = "#new";
  again.append(replay, review, next);
  panel.append(again);
  panel.hidden = false;
  panel.scrollIntoView({ block: "nearest" });
}

/** "1st", "2nd", "3rd", "11th". */
function ordinal(n) {
  const teen = n % 100 > 10 && n % 100 < 14;
  return `${n}${["th", "st", "nd", "rd"][teen || n % 10 > 3 ? 0 : n % 10]}`;
}

/** Where every player ended, listed by place (the server's `places`: in a lives game a
 * player who went out later ranks higher, those out in the same hand share a place), the
 * same place in seat order. */
function standings(s) {
  const table = el("table", "standings");
  const head = el("tr");
  for (const h of ["Place", "Player", hasPoints(s) ? "Points" : "Lives"]) {
    head.append(el("th", null, h));
  }
  table.append(head);
  const won = (p) => (s.winner || []).includes(p.seat);
  const places = (s.summary && s.summary.places) || [];
  const place = (p) => places[p.seat] ?? (won(p) ? 1 : s.players.length);
  const order = [...s.players].sort((a, b) => place(a) - place(b) || a.seat - b.seat);
  for (const p of order) {
    const tr = el("tr");
    tr.dataset.seat = p.seat;
    const me = p.name === "You" ? "You" : `${p.name} (you)`;
    const who = el("td", null, p.seat === s.you ? me : `${p.name} (${p.label})`);
    if (won(p)) who.append(el("span", "badge winner", "winner"));
    const at = places[p.seat];
    tr.append(el("td", null, at ? ordinal(at) : "\u2013"), who,
      el("td", null, p.out ? "out" : scoreText(s, p)));
    table.append(tr);
  }
  return table;
}

/** Plays `action` (after checking it is in STATE.legal) and shows what followed. */
async function play(action) {
  const s = page.game;
  if (!s) return;
  if (page.busy) {
    say("Wait: the other players are still moving.");
    return;
  }
  if (s.status === "over") {
    say("The game is over.");
    return;
  }
  if (!s.legal.some((m) => m.action === action)) {
    say("That move is not allowed now.");
    return;
  }
  page.busy = true;
  markReady(false);
  say("");
  $("hint").hidden = true;
  const clicked = performance.now();
  try {
    const res = await api("POST", `/api/games/${s.id}/move`, { action, seq: s.seq });
    const drawn = performance.now();
    const next = res.data.game;
    $("actions").replaceChildren();
    await animate(s, next, next.events);
    page.game = next;
    render(next);
    if (next.status === "over") showGameOver(next);
    page.metrics.moves.push({ request: res.ms, server: res.serverMs,
      ready: performance.now() - clicked, animated: performance.now() - drawn,
      showdown: next.events.some((e) => e.kind === "hand_over"),
      others: next.events.filter((e) => e.seat !== next.you && e.kind !== "deal").length });
  } catch (err) {
    say(err.message.startsWith("stale move")
      ? "That move was not sent: the game has moved on since (in another tab?). "
        + "Here is where it stands now." : err.message);
    try {
      rebuild((await api("GET", `/api/games/${s.id}`)).data.game);
    } catch {
      // the message above says what went wrong; the table stays as it was
    }
  } finally {
    page.busy = false;
    markReady(true);
  }
}

// -- what a click or a key means ------------------------------------------------------------
function whyNotCard(s, card) {
  if (!s.hand.includes(card)) return `You don't hold the ${cardText(card)}.`;
  if (isGolf(s)) {
    return s.phase === "golf_place" ? `${click() === "tap" ? "Tap" : "Click"} a face-down slot `
      + "to put the card there." : golfDrawFirst();
  }
  if (s.phase === "draw") {
    const has = (action) => s.legal.some((m) => m.action === action);
    const ways = [];
    if (has(ACTION.STOCK)) ways.push(`${click()} the stock${keyHint("s")}`);
    if (has(ACTION.TAKE)) {
      ways.push(`${has(ACTION.STOCK) ? "" : `${click()} `}the discard pile${keyHint("d")}`);
    }
    const rest = [has(ACTION.KNOCK) && `knock${keyHint("k")}`,
      has(ACTION.END_PLAY) && `end the play${keyHint("e")}`]
      .filter(Boolean);
    return `Draw first: ${ways.join(" or ")}${rest.map((r) => `, or ${r}`).join("")}.`;
  }
  if (card === s.taken) {
    return `You just took the ${cardText(card)} from the discard pile, so you may not put it `
      + "straight back.";
  }
  return "You cannot discard now.";
}

function golfDrawFirst() {
  return `Draw first: ${click()} the stock${keyHint("s")} or take the top discard${keyHint("d")}.`;
}

/** Golf: a click on slot `i` puts the card held there (face up). */
function trySlot(i) {
  const s = page.game;
  if (!s || page.busy) return say("Wait: the other players are still moving.");
  const place = s.legal.find((m) => m.action === GOLF.PLACE + i);
  if (place) return play(place.action);
  if (s.phase === "golf_draw") {
    return say(golfDrawFirst());
  }
  if ((s.players[s.you].slots || [])[i]) return say(`Slot ${i + 1} is already face up.`);
  return say("You cannot put a card there now.");
}

function tryCard(card) {
  const s = page.game;
  if (!s || page.busy) return say("Wait: the other players are still moving.");
  const move = s.legal.find((m) => m.key === card.toLowerCase() && m.action < 52);
  if (move) return play(move.action);
  return say(whyNotCard(s, card));
}

function tryPile(action) {
  const s = page.game;
  if (!s || page.busy) return say("Wait: the other players are still moving.");
  if (s.status === "over") return say("The game is over.");
  if (s.legal.some((m) => m.action === action)) return play(action);
  if (s.phase === "discard") {
    const how = touchScreen() ? "tap it" : "click it, or type it like kh and Enter";
    return say(`You hold four cards: discard one first (${how}).`);
  }
  if (s.phase === "golf_place") {
    return say(s.taken ? `Put the card you took in a face-down slot: ${click()} the slot.`
      : "To discard the card, choose the slot to turn face up (the buttons below).");
  }
  return say(action === ACTION.STOCK ? "You cannot draw from the stock now."
    : (s.top_discard ? "You cannot take the top discard now." : "The discard pile is empty."));
}

async function hint() {
  const s = page.game;
  if (!s || page.busy || s.status === "over" || !s.legal.length) {
    return say("A hint is there at your turn.");
  }
  try {
    const { data } = await api("GET", `/api/games/${s.id}/hint`);
    const panel = $("hint");
    panel.replaceChildren(el("h3", null, `Hint: ${data.label}`), el("p", null, data.why));
    if (data.top && data.top.length) {
      panel.append(el("p", "muted", "The trained policy in your seat would:"));
      const ul = el("ul", "top-moves");
      for (const t of data.top) {
        const li = el("li", "top-move");
        const bar = el("span", "bar");
        bar.style.width = `${Math.round(t.p * 100)}%`;
        const track = el("span", "track");
        track.append(bar);
        li.append(track, el("span", "p", `${Math.round(t.p * 100)}%`), el("span", null, t.label));
        ul.append(li);
      }
      panel.append(ul);
    }
    panel.hidden = false;
  } catch (err) {
    say(err.message);
  }
}

function showTyped() {
  $("typed").textContent = page.typed ? `typed: ${page.typed}\u2581 (Enter to play, Esc to clear)` : "";
}

function submitTyped() {
  const text = page.typed.trim().toLowerCase();
  page.typed = "";
  showTyped();
  if (!text) return;
  const s = page.game;
  if (!s) return;
  const byKey = s.legal.find((m) => m.key === text);
  if (byKey && !page.busy) return play(byKey.action);
  if (text === "h") return hint();
  if (text === "k") return say(page.busy ? "Wait: the other players are still moving."
    : "You cannot knock now.");
  const card = typedCard(text);
  if (card) return tryCard(card);
  if (page.busy) return say("Wait: the other players are still moving.");
  const keys = s.legal.map((m) => m.key).join(", ");
  return say(`"${text}" is not a move here${keys ? `; you may type ${keys}` : ""}.`);
}

/** The terminal's one-letter moves by what they do, whatever the menu calls them (golf's
 * menu says "stock" and "take"): s, d, k, e, and in golf 1 2 3 for a slot. */
function directMove(s, key) {
  const byKey = { s: ACTION.STOCK, d: ACTION.TAKE, k: ACTION.KNOCK, e: ACTION.END_PLAY };
  let action = byKey[key];
  if (action === undefined && isGolf(s) && /^[1-3]$/.test(key)) {
    action = GOLF.PLACE + Number(key) - 1;
  }
  return action !== undefined && s.legal.some((m) => m.action === action) ? action : null;
}

function tableKey(ev) {
  const s = page.game;
  if (ev.key === "Enter" || ev.key === " ") {
    if (page.continueShowdown) {
      ev.preventDefault();
      page.continueShowdown();
      return;
    }
    if (ev.key === "Enter" && page.typed) {
      ev.preventDefault();
      submitTyped();
    }
    return;
  }
  if (ev.key === "Escape") {
    page.typed = "";
    showTyped();
    return;
  }
  if (ev.key === "Backspace") {
    page.typed = page.typed.slice(0, -1);
    showTyped();
    return;
  }
  if (ev.key.length !== 1 || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (!/^[0-9a-zA-Z\u2660-\u2667_]$/.test(ev.key)) return;
  ev.preventDefault();
  page.typed += ev.key.toLowerCase();
  const t = page.typed;
  if (t.length === 1 && s) {
    const direct = directMove(s, t);
    if (direct !== null) {
      page.typed = "";
      showTyped();
      return play(direct);
    }
    const longer = s.legal.some((m) => m.key.length > 1 && m.key.startsWith(t));
    const exact = s.legal.find((m) => m.key === t);
    // a key that starts no card name (s, d, e, h) acts at once; so does k while no card
    // can be discarded (the terminal's knock); anything else waits for Enter ("kh", "10h")
    if (!longer && (exact || "sdeh".includes(t))) {
      page.typed = "";
      showTyped();
      if (t === "h") return hint();
      if (exact) return play(exact.action);
      if (t === "s") return tryPile(ACTION.STOCK);
      if (t === "d") return tryPile(ACTION.TAKE);
      if (page.busy) return say("Wait: the other players are still moving.");
      return say("You cannot end the play now: the stock is not exhausted.");
    }
  }
  showTyped();
}

// -- replays: the finished game on the table, every hand face up -----------------------------
/** The replay of game `id` on the table; with `review`, its review beside it (asked for
 * at once: the replay is drawn while the server plays the decisions out). */
async function openReplay(id, review = false) {
  $("r-pos").textContent = "";  // nothing of a replay shown before this one is drawn
  $("r-title").textContent = "Loading the replay\u2026";
  show("replay");
  markReady(false);
  const reviewed = review ? openReview(id) : null;
  const { data } = await api("GET", `/api/games/${encodeURIComponent(id)}/replay`);
  showReplay(data, `Replay of game ${id}`, id);
  if (reviewed) await reviewed;
}

function showReplay(replay, title, gameId = null) {
  page.replay = replay;
  page.replayGame = gameId;
  page.replayFrames = replayFrames(replay);
  show("replay");
  showReviewPanel(!!gameId && !!page.review && page.review.id === gameId);
  hidePanels();
  const names = replay.players.map((p) => p.name).join(", ");
  $("r-title").textContent = `${title}: ${names} (${replay.rules.name.replaceAll("_", " ")} rules)`;
  $("r-slider").max = page.replayFrames.length - 1;
  // a game of the server's, over, with a person in it: its decisions can be reviewed
  $("r-review").hidden = !(gameId && replay.you !== null && replay.seed !== null)
    || !!(page.review && page.review.id === gameId);
  // every hand face up to start with; a game between agents has no one whose view to show
  $("r-show-all").disabled = replay.you === null;
  setShowAll(true, false);
  replayStep(0);
  markReady(true);
}

/** "Show every hand" on (every hand face up, as the replay is) or off (the person's own
 * cards and what they saw), and the frame shown again. */
function setShowAll(on, redraw = true) {
  page.showAll = on;
  $("r-show-all").checked = on;
  document.body.dataset.showAll = on ? "1" : "0";
  if (redraw && page.replayFrames) replayStep(page.replayStep);
}

/** The replay cut into what the table shows one screen at a time: a decision's move, and
 * where it ended a hand, that hand's showdown (the hands as they ended, before the next
 * deal) and then the next deal, as the live game shows them. Each frame has its events
 * (the log), its table (a STATE for `render`) and the result it shows, if any. */
function replayFrames(r) {
  const frames = [];
  let table = null;
  r.steps.forEach((step, k) => {
    let shown = [];
    for (const e of step.events) {
      shown.push(e);
      if (e.kind !== "hand_over") continue;
      table = showdownTable(r, k, shown, e.result, table);
      frames.push({ step: k, events: shown, result: e.result, table });
      shown = [];
    }
    const last = frames[frames.length - 1];
    if (shown.length && shown.every((e) => e.kind === "game_over") && last && last.step === k) {
      // the game's end is told below its last showdown, the winner marked at the table
      last.events.push(...shown);
      last.table = { ...last.table, status: "over", winner: r.winner !== null ? [r.winner] : null };
    } else if (shown.length) {
      table = replayTable(r, k, step.state);
      frames.push({ step: k, events: shown, result: null, table });
    }
  });
  return frames;
}

/** Seat `seat` as the table names it at step `k`: its name and agent label ("Alice",
 * "PPO"), the label of the agent that took the seat over once it has. */
function replaySeat(r, seat, k) {
  const info = r.players[seat] || { name: `seat ${seat}`, agent: "", label: "" };
  const over = (r.replacements || []).filter((x) => x.seat === seat && x.from_step <= k);
  const label = over.length ? over[over.length - 1].label : info.label;
  const you = r.you ?? 0;
  // the seat at the bottom is the person's; in a game between agents, seat 0 with its label
  const name = seat === you && label ? `${info.name} (${label})` : info.name;
  return { name, agent: info.agent, label: seat === you ? "" : label };
}

/** A replay step's FULLSTATE as the STATE `render` draws: every hand face up (golf's slots
 * in their order), no move on offer. */
function replayTable(r, k, st) {
  const you = r.you ?? 0;
  const over = st.to_move === null;
  const golf = r.rules.play === "golf";
  const players = st.players.map((p) => ({
    ...p, ...replaySeat(r, p.seat, k), known: p.known || [],
    hand: golf ? p.slots : p.hand,
    held: p.out ? 0 : (golf ? p.slots : p.hand).length,
  }));
  const me = players[you];
  return {
    id: r.game_id, status: over ? "over" : "playing", teaching: false, rules: r.rules, you,
    to_move: st.to_move, phase: st.phase, dealer: st.dealer, knocker: st.knocker,
    hand_number: st.hand_number, turn: st.turn, stock: st.stock, top_discard: st.top_discard,
    discard_pile: st.discard_pile, hand: me.hand, hand_value: me.value,
    drawn: st.to_move === you ? st.drawn : null, taken: null, legal: [], players,
    events: [], result: null, winner: over && r.winner !== null ? [r.winner] : null,
    summary: null, holding: st.drawn,
  };
}

/** The table as a hand ended, before the next deal: `prev` (the frame before) with every
 * hand the result shows face up in its place, the lives (or points) the hand left, and the
 * card the ending move put on the pile. A hand that ended at its deal (a dealt 31) shows
 * no pile. */
function showdownTable(r, k, events, result, prev) {
  const next = r.steps[k].state;
  const move = events[0].kind === "hand_over" ? null : events[0];
  const pile = move && prev ? [...prev.discard_pile] : [];
  if (move && discardedBy(move)) pile.push(discardedBy(move));
  const players = prev.players.map((p) => {
    const key = String(p.seat);
    const after = result.lives_after[p.seat];
    const now = next.players[p.seat];
    const points = result.points_after ? result.points_after[p.seat] : p.points;
    return {
      ...p, hand: result.hands[key] || [], held: (result.hands[key] || []).length,
      slots: result.hands[key] && p.slots.length ? result.hands[key] : p.slots,
      face_up: (p.face_up || []).map(() => true), value: result.values[key] ?? null,
      lives: after,
      lives_text: now.lives === after ? now.lives_text : (after > 0 ? `${after} left` : "out"),
      points, points_text: result.points_after ? pointsText(prev, points) : p.points_text,
    };
  });
  return {
    ...prev, status: "playing", phase: "hand_over", to_move: null,
    dealer: result.dealer, knocker: result.knocker, hand_number: result.hand_number,
    discard_pile: pile, top_discard: pile.length ? pile[pile.length - 1] : null,
    stock: move ? prev.stock : null, drawn: null, holding: null, players,
    hand: players[prev.you].hand, hand_value: result.values[String(prev.you)] ?? null,
    winner: null,
  };
}

/** Frame `i` on the table: drawn by the live game's `render`, the log of its hand so far,
 * the showdown's panel under the table when the frame ends a hand. */
function replayStep(i) {
  const frames = page.replayFrames;
  if (!frames || !frames.length) return;
  const n = frames.length;
  const f = Math.max(0, Math.min(n - 1, i));
  page.replayStep = f;
  const frame = frames[f];
  const all = page.showAll || page.replay.you === null;
  const s = all ? frame.table : seenTable(frame);
  const result = frame.result && !all ? seenResult(frame.result, s.you) : frame.result;
  // what nobody at the table saw (an opponent keeping a 31 quiet) is left out of their view
  const seen = (e) => all || !e.unseen;
  $("r-slider").value = f;
  $("r-pos").textContent = `step ${f + 1} of ${n}`;
  $("r-text").textContent = seen(frame.events[0]) ? frame.events[0].text : "\u2026";
  document.body.dataset.replayStep = f;
  document.body.dataset.replayDecision = frame.step;
  let start = f;
  while (start > 0 && frames[start].events[0].kind !== "deal") start -= 1;
  page.lastAction = {};
  $("log").replaceChildren();
  for (const fr of frames.slice(start, f + 1)) {
    for (const e of fr.events) if (seen(e)) logEvent(e, s, false);
  }
  $("log").scrollTop = $("log").scrollHeight;
  render(s);
  markReplayCards(s, all);
  markReviewed(f);
  const panel = $("showdown");
  panel.hidden = !frame.result;
  panel.replaceChildren();
  if (frame.result) {
    panel.append(showdownPanel(result, s, true));
    const end = frame.events.find((e) => e.kind === "game_over");
    if (end) panel.append(el("p", "result-text", end.text));
  }
  $("prompt").textContent = "";
  $("r-prev").disabled = f === 0;
  $("r-first").disabled = f === 0;
  $("r-next").disabled = f === n - 1;
  $("r-last").disabled = f === n - 1;
}

/** What the replay shows beyond the live table, on the cards `render` drew: each hand's
 * value, the card the mover holds ringed (an opponent's golf card held beside its slots),
 * and in golf the slots still face down at this step dimmed (every card is shown). */
function markReplayCards(s, all = true) {
  for (const p of s.players) {
    const own = p.seat === s.you;
    const box = seatEl(p.seat);
    if (!box || p.out) continue;
    if (!all && !own && !p.hand) continue;  // the person's view: only what the table saw
    const golf = isGolf(s) && p.slots && p.slots.length;
    const cards = [...box.querySelectorAll(own && golf ? "[data-slot]" : ".card[data-card]")];
    if (golf && all) {
      cards.forEach((c, i) => {
        if ((p.face_up || [])[i]) return;
        c.classList.add("face-down");
        c.title = `slot ${i + 1}: face down at this step`;
      });
    }
    const holding = s.holding && s.to_move === p.seat ? s.holding : null;
    if (holding && !own) {
      if (golf) {
        const held = cardEl(holding, { small: true });
        held.classList.add("held", "drawn");
        held.title = "held: drawn this turn, to be placed or discarded";
        const hold = el("span", "held-box");
        hold.append(el("span", "held-label", "holding"), held);
        box.append(hold);
      } else {
        const drawn = box.querySelector(`[data-card="${holding}"]`);
        if (drawn) {
          drawn.classList.add("drawn");
          drawn.title = "just drawn";
        }
      }
    }
    if (!own && p.value !== null && p.value !== undefined) {
      box.parentElement.querySelector(":scope > .known")
        ?.replaceChildren(el("span", "muted", `worth ${p.value}`));
    }
  }
}

/** Frame `frame`'s table as the person saw it: their own cards (golf: the slots face up
 * at this step), each opponent's cards it took from the pile and still holds (REPLAY's
 * `known`) and face-down backs for the rest; at a showdown, the hands the showdown showed
 * (after a declared 31, only the declarers'). */
function seenTable(frame) {
  const s = frame.table;
  const r = frame.result;
  const shownAtShowdown = (seat) => !!r && (!r.declarers.length || r.declarers.includes(seat));
  const faceUp = (p) => (p.slots || []).map((c, i) => ((p.face_up || [])[i] ? c : null));
  const players = s.players.map((p) => {
    const golf = Array.isArray(p.slots) && p.slots.length > 0;
    if (p.seat === s.you) {
      if (r) return p;
      return golf ? { ...p, slots: faceUp(p) } : { ...p, hand: p.known || p.hand };
    }
    if (shownAtShowdown(p.seat)) return p;
    return { ...p, hand: undefined, value: null, known: p.known || [],
      slots: golf ? faceUp(p) : p.slots };
  });
  const me = players[s.you];
  const hand = r ? s.hand : (me.hand || []);
  // a hand's value is the person's to know once every card of it is seen
  const whole = me.slots && me.slots.length ? me.slots.every(Boolean) : hand.length === 3;
  return {
    ...s, players, hand, hand_value: r || whole ? s.hand_value : null,
    holding: s.to_move === s.you ? s.holding : null,
  };
}

/** A showdown's RESULT as the person saw it: after a declared 31, only the declarers'
 * hands and their own (the others were never shown). */
function seenResult(result, you) {
  if (!result.declarers.length) return result;
  const keep = new Set([...result.declarers, you].map(String));
  const only = (table) => Object.fromEntries(Object.entries(table).filter(([k]) => keep.has(k)));
  return { ...result, hands: only(result.hands), values: only(result.values) };
}

/** Steps the replay on by itself at the table's speed (at least a third of a second a
 * step), until the end or a click on Pause. */
async function playReplay() {
  if (page.replayTimer) {
    stopReplay();
    return;
  }
  const frames = page.replayFrames;
  if (!frames) return;
  if (page.replayStep >= frames.length - 1) replayStep(0);
  $("r-play").textContent = "Pause";
  const tick = () => {
    if (page.replayFrames !== frames || page.replayStep >= frames.length - 1) {
      stopReplay();
      return;
    }
    replayStep(page.replayStep + 1);
    page.replayTimer = setTimeout(tick, Math.max(speedMs(), 330));
  };
  page.replayTimer = setTimeout(tick, Math.max(speedMs(), 330));
}

function stopReplay() {
  clearTimeout(page.replayTimer);
  page.replayTimer = null;
  $("r-play").textContent = "Play";
}

/** The next showdown: the hands on the table as the hand being shown (or the next) ended. */
function nextShowdown() {
  const frames = page.replayFrames;
  if (!frames) return;
  const k = frames.findIndex((fr, i) => i > page.replayStep && fr.result);
  replayStep(k < 0 ? frames.length - 1 : k);
}

async function uploadReplay(ev) {
  const file = ev.target.files && ev.target.files[0];
  ev.target.value = "";
  if (!file) return;
  if (file.size > 4 * 1024 * 1024) {
    say(`${file.name} is ${file.size} bytes; a replay file may be at most 4 MiB.`);
    return;
  }
  try {
    const text = await file.text();
    const { data } = await api("POST", "/api/replays", text, true);
    say("");
    setHash("#replay-file");
    showReplay(data.replay, `Replay of ${file.name}`);
  } catch (err) {
    say(`${file.name}: ${err.message}`);
  }
}

// -- the review of a finished game, beside its replay ------------------------------------------
/** Asks the server for game `id`'s review (seconds the first time: each of the person's
 * decisions is played out on sampled deals) and shows it beside the replay. */
async function openReview(id) {
  if (page.review && page.review.id === id && page.review.data) {
    showReviewPanel(true);
    drawReview();
    return;
  }
  page.review = { id, data: null };
  showReviewPanel(true);
  $("r-review").hidden = true;
  $("review-body").hidden = true;
  $("review-status").textContent = "Reviewing\u2026 (takes a few seconds)";
  document.body.dataset.review = "loading";
  try {
    const { data } = await api("GET", `/api/games/${encodeURIComponent(id)}/review`);
    if (!page.review || page.review.id !== id) return;  // another game opened meanwhile
    page.review.data = data;
    drawReview();
  } catch (err) {
    if (!page.review || page.review.id !== id) return;
    $("review-status").textContent = `No review: ${err.message}`;
    document.body.dataset.review = "failed";
  }
}

function showReviewPanel(on) {
  $("review").hidden = !on;
  document.body.classList.toggle("reviewing", on);
}

/** The review: the honesty line (what each estimate was sampled from), the summary, the
 * costliest mistakes first with every legal move's win chance, then every decision. A
 * click on a decision shows the table as it stood then, as the person saw it. */
function drawReview() {
  const r = page.review.data;
  $("review-status").textContent = "";
  $("review-body").hidden = false;
  $("review-honesty").textContent = r.honesty;
  $("review-summary").textContent = r.summary
    + (r.skipped ? `; ${r.skipped} decision${r.skipped === 1 ? "" : "s"} with one move or `
      + "of a kind not played out are left out" : "") + ".";
  const byIndex = new Map(r.decisions.map((d) => [d.index, d]));
  const worst = $("review-costliest");
  worst.replaceChildren();
  for (const index of r.costliest) worst.append(reviewItem(byIndex.get(index), true));
  if (!r.costliest.length) {
    worst.append(el("li", "muted", r.decisions.length
      ? "No mistakes: every move was the best or within the estimates' noise of it."
      : "None of your decisions in this game is one the review plays out."));
  }
  const all = $("review-all");
  all.replaceChildren(...r.decisions.map((d) => reviewItem(d, false)));
  $("review-all-box").hidden = !r.decisions.length;
  document.body.dataset.review = "ready";
  if (page.replayFrames) markReviewed(page.replayStep);
}

/** One reviewed decision: its line, and (for the costliest, or once opened) each legal
 * move's win chance, the move played and the best marked. */
function reviewItem(d, detailed) {
  const li = el("li", `review-item${d.mistake ? " mistake" : ""}`);
  li.dataset.index = d.index;
  const b = el("button", "review-jump", d.text);
  b.type = "button";
  b.title = "show the table as it stood at this decision, as you saw it";
  li.append(b);
  if (detailed) li.append(moveValues(d));
  return li;
}

function moveValues(d) {
  const list = el("ul", "top-moves move-values");
  for (const v of d.values) {
    const row = el("li", "top-move");
    const pct = Math.round(v.win_chance * 100);
    const track = el("span", "track");
    const bar = el("span", "bar");
    bar.style.width = `${pct}%`;
    track.append(bar);
    const marks = [v.action === d.played ? "you" : "", v.action === d.best ? "best" : ""]
      .filter(Boolean).join(", ");
    const name = el("span", "move", v.move + (marks ? ` (${marks})` : ""));
    if (v.action === d.played) row.classList.add("played");
    row.append(track, el("span", "p", `${pct}%`), name);
    row.title = `win chance ${pct}% \u00b1 ${Math.round(v.se * 200)} points (two standard errors)`;
    list.append(row);
  }
  return list;
}

/** The frame that shows the table as it stood at decision `index` of the game: the last
 * frame of the replay's step `index` (the step after the decision before it). */
function frameOfDecision(index) {
  const frames = page.replayFrames || [];
  for (let f = frames.length - 1; f >= 0; f -= 1) if (frames[f].step === index) return f;
  return -1;
}

/** The replay at reviewed decision `index`, seen from the person's seat. */
function jumpToDecision(index) {
  const f = frameOfDecision(index);
  if (f < 0) return;
  stopReplay();
  page.showAll = false;
  $("r-show-all").checked = false;
  document.body.dataset.showAll = "0";
  replayStep(f);
  $("view-replay").scrollIntoView({ block: "nearest" });
}

/** The reviewed decision taken at frame `f`'s table, if any, marked in the review and
 * named under the replay's text. */
function markReviewed(f) {
  const note = $("r-decision");
  const data = page.review && page.review.id === page.replayGame ? page.review.data : null;
  const frames = page.replayFrames;
  const frame = frames && frames[f];
  // only the last frame of a step is the table the next decision was taken at
  const at = data && frame && frameOfDecision(frame.step) === f
    ? data.decisions.find((d) => d.index === frame.step) : null;
  for (const li of document.querySelectorAll("#review .review-item")) {
    li.classList.toggle("current", !!at && Number(li.dataset.index) === at.index);
  }
  note.hidden = !at;
  note.textContent = at ? `Your decision here: ${at.text}` : "";
  document.body.dataset.reviewedDecision = at ? at.index : "";
}

// -- results -----------------------------------------------------------------------------
async function openResults() {
  show("results");
  const { data } = await api("GET", "/api/stats");
  const box = $("stats");
  box.replaceChildren();
  if (!data.opponents.length) {
    box.append(el("p", "muted", "No finished games yet (teaching games are not counted)."));
  } else {
    const table = el("table", "stats");
    const head = el("tr");
    for (const h of ["Opponent", "Games", "Wins", "Win %", "Hands", "Lives lost",
      "Lost a hand"]) {
      head.append(el("th", null, h));
    }
    table.append(head);
    for (const o of data.opponents) {
      const tr = el("tr");
      tr.append(el("td", null, o.spec), el("td", "num", o.games), el("td", "num", o.wins),
        el("td", "num", `${(o.win_rate * 100).toFixed(0)}%`), el("td", "num", o.hands),
        el("td", "num", o.lives_lost), el("td", "num", o.lives_lost_per_hand.toFixed(2)));
      table.append(tr);
    }
    box.append(table);
  }
  box.append(el("p", "muted", `Teaching games: ${data.teaching.games} `
    + `(${data.teaching.finished} finished), not counted above.`));
  markReady(true);
}

// -- wiring ------------------------------------------------------------------------------
function wire() {
  $("start-form").addEventListener("submit", startGame);
  $("f-rules").addEventListener("change", showNotes);
  $("f-each").addEventListener("change", showSeatChoices);
  $("f-players").addEventListener("input", showSeatChoices);
  // the table also shows replays, where a click on it plays nothing
  const playing = () => document.body.dataset.view === "table";
  $("stock").addEventListener("click", () => playing() && tryPile(ACTION.STOCK));
  $("discard").addEventListener("click", () => playing() && tryPile(ACTION.TAKE));
  $("hand").addEventListener("click", (ev) => {
    if (!playing()) return undefined;
    const slot = ev.target.closest("[data-slot]");
    if (slot) return trySlot(Number(slot.dataset.slot));
    const b = ev.target.closest("[data-card]");
    if (b) tryCard(b.dataset.card);
    return undefined;
  });
  $("actions").addEventListener("click", (ev) => {
    const b = ev.target.closest("[data-action]");
    if (b) play(Number(b.dataset.action));
  });
  $("hint-button").addEventListener("click", hint);
  $("last-result-button").addEventListener("click", () => {
    const s = page.game;
    if (!s || !s.result) return;
    const panel = $("hint");
    panel.replaceChildren(showdownPanel(s.result, s, false));
    panel.hidden = false;
  });
  const speed = $("speed");
  const saved = localStorage.getItem("scat-speed");
  if (saved !== null && SPEEDS[Number(saved)]) speed.value = saved;
  const showSpeed = () => { $("speed-text").textContent = SPEEDS[Number(speed.value)].text; };
  speed.addEventListener("input", () => {
    localStorage.setItem("scat-speed", speed.value);
    showSpeed();
  });
  showSpeed();
  $("replay-file").addEventListener("change", uploadReplay);
  $("r-slider").addEventListener("input", () => replayStep(Number($("r-slider").value)));
  $("r-prev").addEventListener("click", () => replayStep(page.replayStep - 1));
  $("r-next").addEventListener("click", () => replayStep(page.replayStep + 1));
  $("r-first").addEventListener("click", () => replayStep(0));
  $("r-last").addEventListener("click", () => replayStep(Infinity));
  $("r-play").addEventListener("click", playReplay);
  $("r-showdown").addEventListener("click", nextShowdown);
  $("r-show-all").addEventListener("change", () => setShowAll($("r-show-all").checked));
  $("r-review").addEventListener("click", () => {
    const id = page.replayGame;
    if (!id) return;
    setHash(`#review=${id}`);
    openReview(id);
  });
  $("review").addEventListener("click", (ev) => {
    const b = ev.target.closest(".review-jump");
    if (b) jumpToDecision(Number(b.closest("[data-index]").dataset.index));
  });
  for (const id of ["f-opponents", "f-each"]) $(id).addEventListener("change", showLevelInUse);
  $("f-levels").addEventListener("change", () => { $("start-form").dataset.levelPicked = "1"; });
  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    const tag = t && t.tagName;
    const typing = (tag === "INPUT" && !["range", "checkbox", "button"].includes(t.type))
      || tag === "SELECT" || tag === "TEXTAREA";
    if (typing) return;  // keys typed into the form are the form's
    const view = document.body.dataset.view;
    if (view === "table") tableKey(ev);
    if (view === "replay") {
      const keys = {
        ArrowRight: () => replayStep(page.replayStep + 1),
        ArrowLeft: () => replayStep(page.replayStep - 1),
        Home: () => replayStep(0),
        End: () => replayStep(Infinity),
        n: nextShowdown,
        p: playReplay,
        v: () => !$("r-show-all").disabled && setShowAll(!page.showAll),
      };
      if (keys[ev.key] && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
        ev.preventDefault();
        keys[ev.key]();
      }
    }
  });
  window.addEventListener("hashchange", route);
}

wire();
setShowAll(true, false);
route();
