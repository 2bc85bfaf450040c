// Cards as the API writes them ("10H", "QS", "AC") and as the page draws them:
// plain elements styled by style.css, no images, so nothing is fetched.

const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };

/** Rank and suit of a card string, or null when it is not one. */
export function parseCard(text) {
  const m = /^(A|[2-9]|10|J|Q|K)([CDHS])$/.exec(String(text).trim().toUpperCase());
  return m ? { rank: m[1], suit: m[2] } : null;
}

/** "10H" -> "10♥": the way the terminal and the server's texts write a card. */
export function cardText(card) {
  const c = parseCard(card);
  return c ? c.rank + SUITS[c.suit] : String(card);
}

/** What the person typed ("kh", "10h", "7♣", "q s") as the API's card string, or null. */
export function typedCard(text) {
  let t = String(text).replace(/\s+/g, "").toUpperCase();
  for (const [letter, symbol] of Object.entries(SUITS)) t = t.replace(symbol, letter);
  t = t.replace(/^1([CDHS])$/, "A$1");
  return parseCard(t) ? t : null;
}

/** A face-up card element; `opts.small` for the log and known cards. */
export function cardEl(card, opts = {}) {
  const c = parseCard(card);
  const el = document.createElement(opts.tag || "span");
  el.className = "card face" + (opts.small ? " small" : "");
  if (!c) {
    el.classList.add("back");
    return el;
  }
  el.classList.add(c.suit === "H" || c.suit === "D" ? "red" : "black");
  el.dataset.card = card;
  el.setAttribute("aria-label", `${c.rank} of ${SUIT_NAMES[c.suit]}`);
  const corner = document.createElement("span");
  corner.className = "corner";
  corner.textContent = c.rank + SUITS[c.suit];
  const pip = document.createElement("span");
  pip.className = "pip";
  pip.textContent = SUITS[c.suit];
  const corner2 = corner.cloneNode(true);
  corner2.className = "corner bottom";
  el.append(corner, pip, corner2);
  return el;
}

/** A face-down card element. */
export function backEl(opts = {}) {
  const el = document.createElement("span");
  el.className = "card back" + (opts.small ? " small" : "");
  return el;
}

/** A row of small face-up cards, or a dash when there are none. */
export function cardRow(cards, opts = {}) {
  const row = document.createElement("span");
  row.className = "card-row";
  if (!cards || cards.length === 0) {
    row.textContent = opts.empty ?? "\u2013";
    return row;
  }
  for (const c of cards) row.append(cardEl(c, { small: true }));
  return row;
}
