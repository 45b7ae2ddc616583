// Strona chroma-rag: szukaj (/api/szukaj), cała jednostka (/api/jednostka), odpowiedź strumieniem (/api/pytaj).
// Bez kroku budowania; treść z serwera trafia do DOM wyłącznie przez textContent. Adresy API są względne: ta sama
// strona działa pod / (jedna baza) i pod /b/NAZWA/ (serwer z kilkoma bazami).
"use strict";

const $ = (id) => document.getElementById(id);
const SNIPPET = 400;
const CITATION = /\[([^\[\]\n]+)\]/g;
const REASONS = {
  prog: "Nie znaleziono nic trafnego – żaden fragment nie pasuje do pytania wystarczająco dobrze. "
    + "Spróbuj innych słów albo zdejmij filtry.",
  filtry: "Żaden fragment nie spełnia wybranych filtrów – zmień plik, rodzaj, rok albo artykuł.",
};

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

// busy: a spinner beside the text (CSS), while the server works.
function say(text, isError, busy) {
  const box = $("komunikat");
  box.textContent = text || "";
  box.className = isError ? "blad" : busy ? "czeka" : "";
}

// Page fields (README, „Pola JSON”): a hit has "strona" and "strona_do", a unit and its versions too.
function pages(from, to) {
  return from === to || to === undefined || to === null ? `${from}` : `${from}–${to}`;
}

// The API's "sciezka" is the file's name as citations give it: same-named files from different folders with their
// folder, "it/regulamin.md" (never a path on the server); the page shows it everywhere and sends it back.
function shownName(file, name) {
  return name || file;
}

// short: the act's customary abbreviation ("k.p.c."), cited beside the unit as lawyers do: "art. 505 k.p.c."
// subunit: "§ 1", "ust. 3" when the question cited the unit with it ("art. 148 § 1 kk"), part of the citation
function unitLabel(art, short, subunit) {
  if (!art) return "";
  const unit = art.startsWith("§") ? art : `art. ${art}`;
  return [unit, subunit, short].filter(Boolean).join(" ");
}

// The name with its folder tells apart same-named files from different folders (the server serves only indexed files).
// A file the server doesn't have on its disk (indexed on a team member's computer, moved) gets no link, rather than
// one that can only say so.
function documentLink(file, page, name, onServer = true) {
  if (onServer === false) return "";
  const isPdf = /\.pdf$/i.test(file);
  const link = element("a", isPdf ? `PDF, str. ${page}` : "otwórz plik");
  const where = name && name !== file ? `?sciezka=${encodeURIComponent(name)}` : "";
  link.href = `dokumenty/${encodeURIComponent(file)}${where}${isPdf ? `#page=${page}` : ""}`;
  link.target = "_blank";
  link.rel = "noopener";
  return link;
}

// The page's address and /api/szukaj take the same parameters: /?q=…&plik=…&plik=…&od_roku=…&k=…
const FILTERS = ["plik", "typ", "od_roku", "do_roku", "art", "k"];
const NUMBERS = new Set(["od_roku", "do_roku", "k"]);

function fieldValues(key) {
  const values = key === "plik" ? chosen : [$(key).value];
  return values.map((v) => v.trim()).filter(Boolean);
}

// On a phone the filters fold behind one button; it says how many are set, so a folded filter is not forgotten.
function showFilterCount() {
  const set = [...filterParams()].length;
  $("filtry-przelacz").textContent = set ? `Filtry (${set})` : "Filtry";
}

function setUpFilterToggle() {
  const toggle = $("filtry-przelacz");
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    $("filtry").classList.toggle("rozwiniete", open);
  });
  $("filtry").addEventListener("input", showFilterCount);
  $("filtry").addEventListener("change", showFilterCount);
}

function filterParams() {
  const params = new URLSearchParams();
  for (const key of FILTERS) {
    for (const value of fieldValues(key)) params.append(key, value);
  }
  return params;
}

// The last questions, kept only in this browser (localStorage), offered as suggestions of the question field.
const HISTORY_KEY = "chroma-rag:pytania";
const HISTORY_SIZE = 20;

function pastQuestions() {
  try { return JSON.parse(localStorage.getItem(HISTORY_KEY) || "[]").filter((q) => typeof q === "string"); }
  catch (_) { return []; }
}

function showHistory() {
  $("historia").replaceChildren(...pastQuestions().map((question) => new Option(question)));
}

function remember(question) {
  const questions = [question, ...pastQuestions().filter((q) => q !== question)].slice(0, HISTORY_SIZE);
  try { localStorage.setItem(HISTORY_KEY, JSON.stringify(questions)); } catch (_) { /* storage off: no history */ }
  showHistory();
}

// The search lives in the address (/?q=…&plik=…): a link opens it, Back/Forward go through earlier searches.
function fillFromAddress() {
  const params = new URLSearchParams(window.location.search);
  $("pytanie").value = params.get("q") || "";
  for (const key of FILTERS) {
    const values = params.getAll(key);
    if (key === "plik") {
      // a file not (yet) in the index still filters: its chip shows the name, the server decides
      chosen = [...new Set(values.map((v) => v.trim()).filter(Boolean))];
      showChosen();
      continue;
    }
    const field = $(key);
    if (field.tagName !== "SELECT") { field.value = values[0] || ""; continue; }
    for (const value of values.slice(0, 1)) {
      if (![...field.options].some((o) => o.value === value)) field.append(new Option(value, value));
    }
    for (const option of field.options) option.selected = option.value === (values[0] || "");
  }
  closePicker();
  showFilterCount();
  return Boolean(params.get("q"));
}

// --- The file picker: a combobox (ARIA 1.2) over the indexed files, chosen files as removable chips. -------------
// Typing a few letters of a file name, of the act's name or of its abbreviation ("kpc", "k.p.c.", "własności lok")
// lists the matching files; arrows move, Enter adds (or removes) a file, Escape closes the list, Backspace in the
// empty field removes the last chip. The chosen values are what the address and /api/szukaj take as "plik".
const KINDS = ["konstytucja", "kodeks", "ustawa", "rozporzadzenie", "nowelizacja", "umowa", "regulamin", "dokument"];
const CONSTITUTION = "konstytucja rzeczypospolitej polskiej";
const PLACEHOLDER = "wszystkie – wpisz nazwę, tytuł albo skrót";
let indexed = [];  // picker entries of /api/pliki, acts first (KINDS)
let chosen = [];  // the chosen files' values, in the order they were picked
let shown = [];  // entries in the open list
let active = -1;  // the highlighted entry of the open list

// Lower case without diacritics: "Własności" and "wlasnosci" are the same letters to the picker.
function fold(text) {
  return text.toLowerCase().normalize("NFD").replace(/[\u0300-\u036f]/g, "").replace(/ł/g, "l");
}

// An abbreviation without dots and spaces: "K.P.C.", "k. p. c." and "kpc" are the same.
function abbreviation(text) {
  return fold(text).replace(/[\s.]/g, "");
}

// The act as people name it, without its date (as `chroma-rag lista`): "Kodeks pracy", "Ustawa o własności lokali";
// a user's document: its title.
function actLabel(file) {
  const title = (file.tytul || "").replace(/\s+/g, " ").trim();
  const act = file.akt || "";
  if (!act) return title;
  if (act.toLowerCase().startsWith(CONSTITUTION)) return `Konstytucja Rzeczypospolitej Polskiej${act.slice(CONSTITUTION.length)}`;
  if (act[0] !== act[0].toLowerCase()) return act;
  const before = title.match(/^(.*?)\s+z\s+dnia\s/i);
  let kind = before ? before[1].replace(/^[\s\-–—]+|[\s\-–—]+$/g, "") : "";
  if (kind && kind === kind.toUpperCase()) kind = kind.toLowerCase().replace(/(^|\s)\S/g, (c) => c.toUpperCase());
  return kind ? `${kind} ${act}` : act;
}

function pickerEntry(file) {
  const value = shownName(file.plik, file.sciezka);  // the API takes a same-named file with its folder
  const label = actLabel(file);
  const short = file.skrot || "";
  return {
    value, label, short, type: file.typ || "", year: file.rok,
    key: abbreviation(short),
    start: [fold(label), fold(value)],
    text: fold([value, value.replace(/[-_]/g, " "), label, file.tytul || "", short].join(" ")),
  };
}

function kindRank(entry) {
  const at = KINDS.indexOf(entry.type);
  return at < 0 ? KINDS.length : at;
}

function byKind(a, b) {
  return kindRank(a) - kindRank(b) || a.value.localeCompare(b.value, "pl");
}

// The files matching what was typed, best first: the abbreviation itself, the name's or file's beginning, an
// abbreviation's beginning, the whole text anywhere, then every word anywhere.
function matching(typed) {
  const query = fold(typed).replace(/\s+/g, " ").trim();
  if (!query) return indexed.slice();
  const key = abbreviation(typed);
  const words = query.split(/[\s\-_/]+/).filter(Boolean);
  const scored = [];
  for (const entry of indexed) {
    let score;
    if (entry.key && key === entry.key) score = 0;
    else if (entry.start.some((s) => s.startsWith(query))) score = 1;
    else if (entry.key && key.length >= 2 && entry.key.startsWith(key)) score = 2;
    else if (entry.text.includes(query)) score = 3;
    else if (words.every((w) => entry.text.includes(w) || entry.text.includes(w.replace(/\./g, "")))) score = 4;
    else continue;
    scored.push([score, entry]);
  }
  return scored.sort((a, b) => a[0] - b[0] || byKind(a[1], b[1])).map(([, entry]) => entry);
}

function entryOf(value) {
  return indexed.find((entry) => entry.value === value);
}

function describe(entry) {
  return [entry.label, entry.short, entry.year || ""].filter(Boolean).join(" · ");
}

function announce(text) {
  $("plik-stan").textContent = text;
}

function showChosen() {
  const chips = chosen.map((value) => {
    const entry = entryOf(value);
    const chip = element("li", "", "zeton");
    if (entry && entry.short) chip.append(element("span", entry.short, "skrot"), " ");
    chip.append(element("span", value, "nazwa"));
    if (entry && entry.label) chip.title = entry.label;
    const remove = element("button", "×", "usun");
    remove.type = "button";
    remove.setAttribute("aria-label", `Usuń filtr: ${value}`);
    remove.addEventListener("click", () => { unpick(value); $("plik-szukaj").focus(); });
    chip.append(remove);
    return chip;
  });
  $("plik-wybrane").replaceChildren(...chips);
  $("plik-wybrane").hidden = !chips.length;
  $("plik-szukaj").placeholder = chips.length ? "dodaj plik – nazwa, tytuł albo skrót" : PLACEHOLDER;
  showFilterCount();
}

function pick(value) {
  if (!chosen.includes(value)) chosen.push(value);
  showChosen();
  announce(`Dodano filtr: ${value}. Wybrane pliki: ${chosen.length}.`);
}

function unpick(value) {
  chosen = chosen.filter((v) => v !== value);
  showChosen();
  announce(`Usunięto filtr: ${value}. ${chosen.length ? `Wybrane pliki: ${chosen.length}.` : "Wszystkie pliki."}`);
}

function toggle(entry) {
  if (chosen.includes(entry.value)) unpick(entry.value);
  else pick(entry.value);
  $("plik-szukaj").value = "";
  closePicker();
}

function openPicker(activeFirst) {
  const input = $("plik-szukaj");
  shown = matching(input.value);
  active = activeFirst && shown.length ? 0 : -1;
  const list = $("plik-lista");
  if (!shown.length) {
    const none = element("li", `Żaden plik nie pasuje do „${input.value.trim()}”.`, "brak");
    none.setAttribute("role", "option");
    none.setAttribute("aria-disabled", "true");
    none.setAttribute("aria-selected", "false");
    list.replaceChildren(none);
  } else {
    list.replaceChildren(...shown.map((entry, i) => {
      const option = element("li", "", "opcja");
      option.id = `plik-opcja-${i}`;
      option.setAttribute("role", "option");
      option.setAttribute("aria-selected", String(chosen.includes(entry.value)));
      option.append(element("span", entry.value, "nazwa"), " ");
      const about = describe(entry);
      if (about) option.append(element("span", about, "opis"));
      option.addEventListener("click", () => toggle(entry));
      return option;
    }));
  }
  list.hidden = false;
  input.setAttribute("aria-expanded", "true");
  announce(input.value.trim() ? `Pasujące pliki: ${shown.length}.` : "");
  highlight(active);
}

function closePicker() {
  shown = [];
  active = -1;
  $("plik-lista").hidden = true;
  $("plik-lista").replaceChildren();
  $("plik-szukaj").setAttribute("aria-expanded", "false");
  $("plik-szukaj").removeAttribute("aria-activedescendant");
}

function highlight(index) {
  active = index;
  const input = $("plik-szukaj");
  for (const option of $("plik-lista").querySelectorAll(".opcja")) option.classList.remove("aktywna");
  const option = index >= 0 ? $(`plik-opcja-${index}`) : null;
  if (!option) { input.removeAttribute("aria-activedescendant"); return; }
  option.classList.add("aktywna");
  input.setAttribute("aria-activedescendant", option.id);
  option.scrollIntoView({ block: "nearest" });
}

function pickerKeys(event) {
  const input = $("plik-szukaj");
  const open = !$("plik-lista").hidden;
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    event.preventDefault();
    if (!open) { openPicker(true); return; }
    if (!shown.length) return;
    const step = event.key === "ArrowDown" ? 1 : -1;
    highlight(active < 0 ? 0 : Math.min(Math.max(active + step, 0), shown.length - 1));
  } else if (event.key === "Enter" && !event.ctrlKey && !event.metaKey) {
    if (open && active >= 0) { event.preventDefault(); toggle(shown[active]); }
    else if (open) closePicker();  // nothing highlighted: Enter searches, as in the question field
  } else if (event.key === "Escape") {
    if (open) { event.preventDefault(); closePicker(); }
    else if (input.value) { event.preventDefault(); input.value = ""; }
  } else if (event.key === "Backspace" && !input.value && chosen.length) {
    event.preventDefault();
    unpick(chosen[chosen.length - 1]);
  } else if (event.key === "Tab" && open) {
    closePicker();
  }
}

function setUpPicker() {
  const input = $("plik-szukaj");
  input.addEventListener("input", () => openPicker(Boolean(input.value.trim())));
  input.addEventListener("keydown", pickerKeys);
  input.addEventListener("click", () => { if ($("plik-lista").hidden) openPicker(false); });
  input.addEventListener("blur", () => closePicker());
  // a click on the list must not take the focus from the field first (its blur would close the list)
  $("plik-lista").addEventListener("mousedown", (event) => event.preventDefault());
  showChosen();
}

async function fetchJson(url, options) {
  const response = await fetch(url, options);
  let data = null;
  try { data = await response.json(); } catch (_) { /* non-JSON error page */ }
  if (!response.ok) throw new Error((data && data.blad) || `Serwer odpowiedział błędem ${response.status}.`);
  return data;
}

async function loadFilters() {
  try {
    const files = await fetchJson("api/pliki");
    const fill = (id, values) => {  // the first option ("wszystkie") stays; the chosen value survives a reload
      const chosen = $(id).value;
      $(id).replaceChildren($(id).options[0]);
      for (const value of [...new Set(values)].sort()) $(id).append(new Option(String(value), String(value)));
      $(id).value = chosen;
      if ($(id).value !== chosen) $(id).value = "";
    };
    indexed = files.map(pickerEntry).sort(byKind);
    $("plik").dataset.gotowe = String(indexed.length);
    showChosen();
    fill("typ", files.map((f) => f.typ));
    if (!files.length) say("W bazie nie ma jeszcze zaindeksowanych dokumentów – poczekaj, aż osoba prowadząca serwer je zaindeksuje.", true);
  } catch (error) {
    say(error.message, true);
  }
}

// "[plik, art. N]": the citation as the model and the CLI write it, to paste into a note or a letter.
function citationOf(hit) {
  const unit = unitLabel(hit.art, hit.skrot, hit.podjednostka);
  return `[${shownName(hit.plik, hit.sciezka)}${unit ? `, ${unit}` : ""}]`;
}

// text: a string, or a function giving it at the click (the answer is known only when it has streamed).
function copyOnClick(button, text) {
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(typeof text === "function" ? text() : text);
      say("Skopiowano do schowka.");
    } catch (_) {
      say("Nie udało się skopiować – przeglądarka nie pozwala stronie pisać do schowka.", true);
    }
  });
  return button;
}

function copyButton(label, text) {
  const button = element("button", label, "drugi kopiuj");
  button.type = "button";
  // dozens of "skopiuj cytat" buttons: a screen reader's list of buttons says which citation each copies
  if (typeof text === "string") button.setAttribute("aria-label", `${label} ${text}`);
  return copyOnClick(button, text);
}

// Opens the hit's whole unit in the panel, its passage marked; the label says which unit (there are several).
function wholeUnitButton(hit) {
  const unit = unitLabel(hit.art, hit.skrot, hit.podjednostka);
  const button = element("button", unit.startsWith("§") ? "cały paragraf" : "cały artykuł", "drugi cala-jednostka");
  button.type = "button";
  button.setAttribute("aria-label", `${button.textContent}: ${citationOf(hit)}`);
  button.addEventListener("click", () => showUnit(hit.plik, hit.art, hit.sciezka, hit.tekst));
  return button;
}

function renderHit(hit) {
  const item = element("li");
  const header = element("div", "", "naglowek");
  header.append(element("span", shownName(hit.plik, hit.sciezka), "plik"));
  const unit = unitLabel(hit.art, hit.skrot, hit.podjednostka);
  if (hit.czesci > 1) header.append(` · część ${hit.fragment}/${hit.czesci}`);
  for (const part of [unit, `str. ${pages(hit.strona, hit.strona_do)}`]) {
    if (part) header.append(` · ${part}`);
  }
  item.append(header);
  if (hit.rozdzial) item.append(element("div", hit.rozdzial, "rozdzial"));
  const text = hit.tekst.replace(/\s+/g, " ");
  item.append(element("p", text.length > SNIPPET ? `${text.slice(0, SNIPPET)}…` : text));
  const actions = element("div", "", "akcje");
  if (hit.art) actions.append(wholeUnitButton(hit));
  actions.append(copyButton("skopiuj cytat", citationOf(hit)));
  actions.append(documentLink(hit.plik, hit.strona, hit.sciezka, hit.plik_na_serwerze));
  item.append(actions);
  return item;
}

async function search(event, fromAddress) {
  if (event) event.preventDefault();
  const question = $("pytanie").value.trim();
  if (!question) { say("Wpisz pytanie.", true); return; }
  const params = filterParams();
  params.set("q", question);
  if (!fromAddress && window.location.search !== `?${params}`) history.pushState(null, "", `?${params}`);
  remember(question);
  say("Szukam…", false, true);
  $("wyniki").replaceChildren();
  clearAnswer();
  showPlan(null);
  try {
    const result = await fetchJson(`api/szukaj?${params}`);
    showPlan(result.plan);
    showHits(result.wyniki, result.powod);
  } catch (error) {
    $("wyniki-sekcja").hidden = true;
    say(error.message, true);
  }
}

// The plan of a planned search (queries in the acts' language, acts and units the model named), as in the CLI.
function showPlan(plan) {
  const box = $("plan");
  box.hidden = !plan || Boolean(plan.blad);
  if (box.hidden) { box.textContent = ""; return; }
  const queries = plan.zapytania.map((q) => `„${q}”`).join("; ") || "–";
  const acts = plan.dokumenty.join(", ") || "żaden z indeksu";
  const units = plan.jednostki.length ? `; jednostki: ${plan.jednostki.join(", ")}` : "";
  box.textContent = `Plan wyszukiwania${plan.z_pamieci ? " (z pamięci)" : ""}: ${queries}; akty: ${acts}${units}.`;
}

function showHits(hits, reason) {
  $("wyniki").replaceChildren(...hits.map(renderHit));
  $("wyniki-sekcja").hidden = !hits.length;
  if (!hits.length) say(REASONS[reason] || REASONS.prog, true);
  else say(`Znaleziono fragmentów: ${hits.length}.`);
}

// passage: the cited fragment's text, highlighted in the unit when found there.
function withPassage(text, passage) {
  // a part of a long unit may carry its heading differently: its first 80 characters still find it
  const wanted = [passage, passage && passage.slice(0, 80)].map((p) => (p || "").trim()).filter(Boolean);
  const found = wanted.find((p) => text.includes(p));
  if (!found) return [text];
  const at = text.indexOf(found);
  const end = at + found.length;
  return [text.slice(0, at), element("mark", text.slice(at, end), "cytowany"), text.slice(end)];
}

// The unit's panel: beside the answer on a wide screen (not modal – the answer stays readable and clickable),
// a modal sheet from the bottom on a phone. Esc closes it either way, and the focus goes back where it was.
const BESIDE = window.matchMedia("(min-width: 64rem)");
let panelOpener = null;  // what had the focus when the panel opened: it gets the focus back

function openPanel() {
  const dialog = $("jednostka");
  if (!dialog.contains(document.activeElement)) panelOpener = document.activeElement;
  if (!dialog.open) {
    if (BESIDE.matches) dialog.show();
    else dialog.showModal();
    document.body.classList.toggle("z-panelem", BESIDE.matches);
  }
  dialog.querySelector(".zamknij").focus();
}

function setUpPanel() {
  const dialog = $("jednostka");
  dialog.addEventListener("close", () => {
    if (dialog.open) return;  // reopened in the other mode (below): not closed for the user
    document.body.classList.remove("z-panelem");
    if (panelOpener && panelOpener.isConnected) panelOpener.focus();
    panelOpener = null;
  });
  // the window crossed the breakpoint (a tablet turned, half a screen): the open panel becomes a sheet or back
  BESIDE.addEventListener("change", () => {
    if (!dialog.open) return;
    dialog.close();
    if (BESIDE.matches) dialog.show();
    else dialog.showModal();
    document.body.classList.toggle("z-panelem", BESIDE.matches);
  });
  // a modal dialog closes on Esc by itself; the panel beside the answer is not modal
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !event.defaultPrevented && dialog.open) { event.preventDefault(); dialog.close(); }
  });
}

async function showUnit(file, art, name, passage) {
  $("jednostka-naglowek").textContent = `${shownName(file, name)} · ${unitLabel(art)}`;
  $("jednostka-tresc").replaceChildren(element("p", "Wczytuję…"));
  $("jednostka-dokument").replaceChildren();
  openPanel();
  try {
    const unit = await fetchJson(`api/jednostka?${new URLSearchParams({ plik: shownName(file, name), art })}`);
    $("jednostka-naglowek").textContent = `${shownName(file, name)} · ${unitLabel(unit.art, unit.skrot)}`;
    const parts = [];
    if (unit.tytul) parts.push(element("p", unit.tytul, "rozdzial"));
    let cited = unit.wersje[0];  // the version with the cited passage: its page is linked under the unit's name
    for (const version of unit.wersje) {
      const box = element("div", "", "wersja");
      const label = { obecna: "[obecne brzmienie]", przyszla: "<przyszłe brzmienie>" }[version.wersja];
      if (label) box.append(element("h3", label));
      if (version.rozdzial) box.append(element("div", version.rozdzial, "rozdzial"));
      const body = element("p");
      const text = withPassage(version.tekst, passage);
      if (text.length > 1) cited = version;
      body.append(...text);
      box.append(body);
      // each version its own page
      if (unit.wersje.length > 1) box.append(documentLink(unit.plik, version.strona, name, unit.plik_na_serwerze));
      parts.push(box);
    }
    if (unit.uchylony) parts.unshift(element("p", "Jednostka uchylona.", "blad"));
    const link = cited ? documentLink(unit.plik, cited.strona, name, unit.plik_na_serwerze) : "";
    $("jednostka-dokument").replaceChildren(link);
    $("jednostka-tresc").replaceChildren(...parts);
    const marked = $("jednostka-tresc").querySelector("mark.cytowany");
    if (marked) marked.scrollIntoView({ block: "center" });  // a long article: the cited passage in sight
  } catch (error) {
    $("jednostka-tresc").replaceChildren(element("p", error.message, "blad"));
  }
}

// "[plik.pdf, art. 5]" → a link to the page of the fragment it cites (the model may drop the extension);
// same-named files are cited with their folder, "[kadry/regulamin.txt, § 1]".
function citationTarget(inner, hits) {
  const [file, unit] = inner.split(",").map((s) => s.trim().toLowerCase());
  const stem = (name) => name.replace(/\.[a-z0-9]+$/, "");
  const cited = stem(file || "");
  const named = (hit) => {
    const shown = stem(shownName(hit.plik, hit.sciezka).toLowerCase());  // may have more folders than the citation
    return stem(hit.plik.toLowerCase()) === cited || shown === cited || shown.endsWith(`/${cited}`);
  };
  return hits.find((hit) => named(hit)
    && (!unit || unit === unitLabel(hit.art).toLowerCase() || unit === `s. ${hit.strona}`));
}

function clearAnswer() {
  $("odpowiedz").hidden = true;
  delete $("odpowiedz").dataset.gotowa;
  $("odpowiedz-tekst").replaceChildren();
  $("zrodla").replaceChildren();
  $("zrodla-naglowek").hidden = true;
  $("ostrzezenie").hidden = true;
  $("kopiuj-odpowiedz").hidden = true;
  answerWithSources = "";
}

// Citations not among the fragments sent (the API's "niepasujace_cytaty") are marked, not linked. Sources are
// numbered in the order the answer first cites them (the first citation is [1]), the uncited ones after them;
// returns the sources in that order.
function renderAnswer(text, hits, invented) {
  const matches = [...text.matchAll(CITATION)].map((match) => [match, citationTarget(match[1], hits)]);
  const ordered = [];
  for (const [, hit] of matches) if (hit && !ordered.includes(hit)) ordered.push(hit);
  ordered.push(...hits.filter((hit) => !ordered.includes(hit)));
  const citation = (inner, whole) => {
    const hit = citationTarget(inner, hits);
    if (hit) {
      // [n]: the number of the source below; a click opens the whole unit with the cited passage marked
      const number = ordered.indexOf(hit) + 1;
      const link = element("a", `[${number}]`, "cytat");
      link.href = `#zrodlo-${number}`;
      link.title = whole;
      link.setAttribute("aria-label", `źródło ${number}: ${inner}`);
      link.addEventListener("click", (event) => {
        if (!hit.art) return;  // a fragment without a unit: the link goes to the source on the list
        event.preventDefault();
        showUnit(hit.plik, hit.art, hit.sciezka, hit.tekst);
      });
      return link;
    }
    if (invented.includes(inner.trim()) || invented.includes(whole)) return element("mark", whole, "cytat-niepasujacy");
    return whole;
  };
  $("odpowiedz-tekst").replaceChildren(...markdownBlocks(text, (line) => inlineNodes(line, citation)));
  const warning = $("ostrzezenie");
  warning.hidden = !invented.length;
  warning.textContent = invented.length
    ? `Uwaga: cytowanych źródeł ${invented.map((c) => (c.startsWith("[") ? c : `[${c}]`)).join(", ")} nie ma wśród `
      + "fragmentów wysłanych do modelu – sprawdź je, zanim im zaufasz."
    : "";
  return ordered;
}

// The Markdown models write – paragraphs, lists, headings, **bold**, *italics*, `code` – built as DOM nodes: the
// answer never goes through innerHTML, so HTML in it shows as text. inline: a line's text → its nodes.
function markdownBlocks(text, inline) {
  const blocks = [];
  let list = null;
  let paragraph = null;
  for (const line of text.split("\n")) {
    const item = line.match(/^\s*(?:[-*•]|(\d+)[.)])\s+(.*)$/);
    if (item) {
      const numbered = item[1] !== undefined;
      if (!list || list.numbered !== numbered) {
        list = { numbered, node: element(numbered ? "ol" : "ul") };
        if (numbered) list.node.start = Number(item[1]);
        blocks.push(list.node);
      }
      const entry = element("li");
      entry.append(...inline(item[2]));
      list.node.append(entry);
      paragraph = null;
      continue;
    }
    list = null;
    const heading = line.match(/^\s*#{1,6}\s+(.*)$/);
    if (!line.trim() || heading) paragraph = null;
    if (!line.trim()) continue;
    if (heading) {
      const title = element("p", undefined, "naglowek-odpowiedzi");
      const strong = element("strong");
      strong.append(...inline(heading[1]));
      title.append(strong);
      blocks.push(title);
      continue;
    }
    if (paragraph) paragraph.append(element("br"));
    else blocks.push(paragraph = element("p"));
    paragraph.append(...inline(line));
  }
  return blocks;
}

const INLINE = /\*\*([^*\n]+)\*\*|__([^_\n]+)__|(?<![\w*])\*([^*\s][^*\n]*?)\*(?![\w*])|`([^`\n]+)`|\[([^[\]\n]+)\]/g;

function inlineNodes(text, citation) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    const [whole, bold, underlined, italic, code, cited] = match;
    if (bold !== undefined || underlined !== undefined) {
      const strong = element("strong");
      strong.append(...inlineNodes(bold ?? underlined, citation));
      nodes.push(strong);
    } else if (italic !== undefined) {
      const emphasis = element("em");
      emphasis.append(...inlineNodes(italic, citation));
      nodes.push(emphasis);
    } else if (code !== undefined) {
      nodes.push(element("code", code));
    } else {
      nodes.push(citation(cited, whole));
    }
    last = match.index + whole.length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

// The answer as the model wrote it, with its sources listed under it (for a note outside the page).
let answerWithSources = "";

function renderSources(hits) {
  $("zrodla").replaceChildren(...hits.map((hit, i) => {
    const item = element("li", `${shownName(hit.plik, hit.sciezka)}${hit.art ? `, ${unitLabel(hit.art, hit.skrot, hit.podjednostka)}` : ""}, `
      + `str. ${pages(hit.strona, hit.strona_do)} `);
    item.id = `zrodlo-${i + 1}`;
    item.append(documentLink(hit.plik, hit.strona, hit.sciezka, hit.plik_na_serwerze));
    if (hit.art) item.append(" ", wholeUnitButton(hit));  // the source beside the answer, as its citation opens it
    item.append(" ", copyButton("skopiuj cytat", citationOf(hit)));
    return item;
  }));
  $("zrodla-naglowek").hidden = !hits.length;
}

// Server-Sent Events from a POST: fetch + ReadableStream (EventSource only does GET).
async function* events(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const kind = (block.match(/^event: (.*)$/m) || [])[1];
      const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
      if (kind) yield [kind, JSON.parse(data)];
    }
  }
}

let streaming = null;  // AbortController of the answer being streamed

// --- The conversation: "Zapytaj" after an answer asks a follow-up in the same saved conversation. ------------
let conversation = null;  // the saved conversation's id (/api/rozmowy/ID), after its first answer
let lastTurn = null;  // the answer on screen: {pytanie, odpowiedz}, moved into the thread by the next question
let rewindTo = null;  // the turn (from 1) the next "Zapytaj" answers anew: a regenerated answer, an edited question

function addTurn(turn) {
  const number = $("tury").children.length + 1;
  const item = element("li");
  item.append(element("p", turn.pytanie, "pytanie-tury"), element("p", turn.odpowiedz, "odpowiedz-tury"),
    editButton(number, turn.pytanie));
  $("tury").append(item);
  $("tury").hidden = false;
}

function editButton(number, question) {
  const edit = element("button", "popraw pytanie", "drugi");
  edit.type = "button";
  edit.setAttribute("aria-label", `popraw pytanie ${number}: „${question}”`);
  edit.addEventListener("click", () => editTurn(number, question));
  return edit;
}

// The question goes back into the field; the next "Zapytaj" answers it as that turn, the later turns are dropped
// (they followed the old question). Regenerating is the same with the question unchanged.
function editTurn(number, question) {
  rewindTo = number;
  $("pytanie").value = question;
  $("pytanie").focus();
  say(`Poprawiasz pytanie ${number} – „Zapytaj” odpowie na nie od nowa, a dalsze pytania tej rozmowy znikną.`);
}

function regenerate() {
  if (!lastTurn || streaming) return;
  rewindTo = $("tury").children.length + 1;
  $("pytanie").value = lastTurn.pytanie;
  ask();
}

// Before a rewound answer: the thread keeps only the turns before the one answered anew.
function rewindThread(number) {
  const earlier = $("tury");
  while (earlier.children.length >= number) earlier.lastElementChild.remove();
  earlier.hidden = !earlier.children.length;
  lastTurn = null;
}

// The conversations this browser started; with personal tokens (users) the server's list of the user's own
// conversations instead (GET api/rozmowy; null without users: on a shared server they are each person's own).
// per base: a server with several bases (/b/NAZWA/) keeps each one's conversations, and a link opens in its base
const CONVERSATIONS_KEY = `chroma-rag:rozmowy${window.location.pathname === "/" ? "" : window.location.pathname}`;
const CONVERSATIONS_SIZE = 50;
const SUMMARY = 300;  // an answer's beginning on the list, as the server's summary (SUMMARY_CHARS)
let accountConversations = null;  // the user's conversations from the server, or null: this browser's list

function myConversations() {
  if (accountConversations) return accountConversations;
  try {  // entries saved before the server's lists had "id" for the id
    return JSON.parse(localStorage.getItem(CONVERSATIONS_KEY) || "[]").filter((c) => c && (c.rozmowa || c.id))
      .map((c) => ({ ...c, rozmowa: c.rozmowa || c.id }));
  } catch (_) { return []; }
}

async function loadConversations() {
  try { accountConversations = (await fetchJson("api/rozmowy")).rozmowy; }
  catch (_) { accountConversations = null; }  // the page works without it: the browser's own list
  showConversations();
}

// "first": the question is the conversation's first (a new one, or its first question edited)
function keepConversation(id, question, answer, first) {
  if (accountConversations) { loadConversations(); return; }
  const started = myConversations().find((saved) => saved.rozmowa === id);
  const entry = { rozmowa: id, pytanie: started && !first ? started.pytanie : question, czas: new Date().toISOString(),
    odpowiedz: answer.length > SUMMARY ? `${answer.slice(0, SUMMARY).trimEnd()}…` : answer };
  keepConversations([entry, ...myConversations().filter((saved) => saved.rozmowa !== id)]);
}

function keepConversations(list) {
  if (accountConversations) { loadConversations(); return; }
  try { localStorage.setItem(CONVERSATIONS_KEY, JSON.stringify(list.slice(0, CONVERSATIONS_SIZE))); }
  catch (_) { /* storage off: no list */ }
  showConversations();
}

function showConversations() {
  const list = myConversations();
  $("moje-rozmowy").hidden = !list.length;
  $("rozmowy-lista").replaceChildren(...list.map((saved) => {
    const item = element("li");
    const link = element("a", saved.pytanie);
    link.href = `?rozmowa=${encodeURIComponent(saved.rozmowa)}`;
    const when = new Date(saved.czas).toLocaleString("pl-PL");
    const remove = element("button", "usuń", "drugi");
    remove.type = "button";
    remove.setAttribute("aria-label", `usuń rozmowę „${saved.pytanie}”`);
    remove.addEventListener("click", () => deleteConversations([saved.rozmowa]));
    item.append(link, ` · ${when} `, remove);
    if (saved.odpowiedz) item.append(element("p", saved.odpowiedz, "odpowiedz-rozmowy"));
    return item;
  }));
}

// One request for one or all: with users the server deletes all of the user's own ({}), without them the ids listed.
async function deleteConversations(ids, all) {
  const body = all && accountConversations ? {} : { rozmowy: ids };
  try {
    await fetchJson("api/rozmowy", {
      method: "DELETE", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
  } catch (error) {
    say(error.message, true);
    return;
  }
  if (ids.includes(conversation)) newConversation();
  keepConversations(myConversations().filter((saved) => !ids.includes(saved.rozmowa)));
  say(all ? "Usunięto wszystkie twoje rozmowy." : "Usunięto rozmowę.");
}

function deleteAll() {
  const ids = myConversations().map((saved) => saved.rozmowa);
  if (window.confirm(`Usunąć wszystkie twoje rozmowy (${ids.length})? Tego nie da się cofnąć.`)) {
    deleteConversations(ids, true);
  }
}

function showConversation(id, standalone, note) {
  conversation = id;
  $("rozmowa-link").href = `?rozmowa=${encodeURIComponent(id)}`;
  $("szukano").textContent = [standalone ? `Szukano: „${standalone}”.` : "", note || ""].join(" ").trim();
  $("ponow").setAttribute("aria-label", `odpowiedz ponownie na pytanie „${lastTurn ? lastTurn.pytanie : ""}”`);
  $("popraw").setAttribute("aria-label", `popraw pytanie „${lastTurn ? lastTurn.pytanie : ""}”`);
  $("rozmowa-stan").hidden = false;
}

function newConversation() {
  conversation = null;
  lastTurn = null;
  rewindTo = null;
  $("tury").replaceChildren();
  $("tury").hidden = true;
  $("rozmowa-stan").hidden = true;
  clearAnswer();
  $("pytanie").focus();
}

// A shared link (/?rozmowa=ID) shows the saved conversation as it was, without asking the model again; someone
// else's (with users) is read-only – a follow-up continues in the reader's own copy. "failed": why an answer given
// anew is not there (an error, or Stop when "stopped"), said after the conversation is shown as the server kept it.
async function openConversation(id, failed, stopped) {
  try {
    const saved = await fetchJson(`api/rozmowy/${encodeURIComponent(id)}`);
    const turns = saved.tury;
    if (!turns.length) return;
    $("tury").replaceChildren();
    for (const turn of turns.slice(0, -1)) addTurn(turn);
    const last = turns[turns.length - 1];
    $("pytanie").value = last.pytanie;
    clearAnswer();
    $("odpowiedz").hidden = false;
    const ordered = last.zrodla.length ? renderAnswer(last.odpowiedz, last.zrodla, last.niepasujace_cytaty) : [];
    if (!last.zrodla.length) $("odpowiedz-tekst").textContent = last.odpowiedz;
    renderSources(ordered);
    $("odpowiedz").dataset.gotowa = "tak";
    lastTurn = { pytanie: last.pytanie, odpowiedz: last.odpowiedz };
    showConversation(saved.rozmowa, last.pytanie_samodzielne !== last.pytanie ? last.pytanie_samodzielne : "");
    if (failed) { say(failed, !stopped); return; }
    const changed = saved.dokumenty_zmienione
      ? " Dokumenty zmieniły się od tej rozmowy – zapytaj ponownie, jeśli odpowiedź ma być aktualna." : "";
    const foreign = saved.moja === false
      ? " To rozmowa innej osoby – dopytanie albo poprawka zacznie twoją własną kopię." : "";
    say(`Zapisana rozmowa z ${new Date(last.czas).toLocaleString("pl-PL")} – bez pytania modelu.${changed}${foreign}`);
  } catch (error) {
    say(failed || error.message, true);
  }
}

function setStreaming(controller) {
  streaming = controller;
  $("zapytaj").disabled = Boolean(controller);
  $("szukaj").disabled = Boolean(controller);
  $("zatrzymaj").hidden = !controller;
}

async function ask() {
  const question = $("pytanie").value.trim();
  if (!question || streaming) { if (!question) say("Wpisz pytanie.", true); return; }
  const body = { pytanie: question };
  if (conversation) body.rozmowa = conversation;
  const rewound = conversation ? rewindTo : null;
  rewindTo = null;
  if (rewound) {
    body.tura = rewound;
    rewindThread(rewound);
  } else if (lastTurn) addTurn(lastTurn);  // the answer on screen becomes the thread's earlier turn
  lastTurn = null;
  for (const [key, value] of filterParams()) {
    if (NUMBERS.has(key)) body[key] = Number(value);
    else (body[key] = body[key] || []).push(value);
  }
  const controller = new AbortController();
  setStreaming(controller);
  remember(question);
  clearAnswer();
  showPlan(null);
  $("wyniki").replaceChildren();  // the fragments of an earlier search are not this answer's
  $("wyniki-sekcja").hidden = true;
  $("odpowiedz").hidden = false;
  $("odpowiedz-tekst").setAttribute("aria-busy", "true");
  say("Szukam fragmentów…", false, true);
  let text = "";
  try {
    // Stop aborts the request: the server sees the client gone and stops reading from the chat model.
    const response = await fetch("api/pytaj", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      throw new Error(data.blad || `Serwer odpowiedział błędem ${response.status}.`);
    }
    for await (const [kind, data] of events(response)) {
      if (kind === "zrodla") {
        // the sources as soon as the search is done: readable while the model writes, kept after Stop
        showPlan(data.plan);
        renderSources(data.fragmenty);
        showHits(data.fragmenty, "prog");
        say("Model czatu odpowiada…", false, true);
      } else if (kind === "tekst") {
        text += data.tekst;
        $("odpowiedz-tekst").textContent = text;
      } else if (kind === "wynik") {
        showPlan(data.plan);
        if (data.fragmenty.length) {
          const invented = data.niepasujace_cytaty || [];
          const ordered = renderAnswer(data.odpowiedz, data.fragmenty, invented);
          renderSources(ordered);
          answerWithSources = `${data.odpowiedz}\n\n${invented.length ? `${$("ostrzezenie").textContent}\n\n` : ""}`
            + "Źródła:\n"
            + ordered.map((hit, i) => `${i + 1}. ${citationOf(hit)}, str. ${pages(hit.strona, hit.strona_do)}`)
              .join("\n");
          $("kopiuj-odpowiedz").hidden = false;
          showHits(data.fragmenty, "prog");
          say(data.model ? `Odpowiedź modelu ${data.model}.` : "Odpowiedź bez modelu czatu.");
        } else {
          // the answer text then is the CLI's sentence (with its options); the page says why in its own words
          $("odpowiedz").hidden = true;
          showHits([], data.powod);
        }
        $("odpowiedz").dataset.gotowa = "tak";
        lastTurn = { pytanie: question, odpowiedz: data.odpowiedz };
        if (data.rozmowa) {
          keepConversation(data.rozmowa, question, data.odpowiedz, rewound === 1);
          showConversation(data.rozmowa, data.pytanie_samodzielne, data.uwaga_rozmowy);
        }
      } else if (kind === "blad") {
        throw new Error(data.blad);
      }
    }
  } catch (error) {
    if (controller.signal.aborted && rewound) {
      openConversation(conversation, "Zatrzymano odpowiedź – rozmowa została taka, jaka była.", true);
    } else if (controller.signal.aborted) {
      $("odpowiedz").dataset.gotowa = "zatrzymana";
      say(text ? "Zatrzymano odpowiedź – pokazany jest jej początek." : "Zatrzymano odpowiedź.");
    } else if (rewound) {
      openConversation(conversation, error.message);  // the server kept the turns as they were: shown again
    } else {
      if (!text) $("odpowiedz").hidden = true;
      say(error.message, true);
    }
  } finally {
    $("odpowiedz-tekst").setAttribute("aria-busy", "false");
    setStreaming(null);
  }
}

// What the server says about itself (/api/stan): a token in use (logout), watched folders (serwuj --obserwuj).
const STATE_EVERY_MS = 2000;
const WATCH_STATES = {
  startuje: "uruchamiam obserwowanie…",
  indeksuje: "indeksuję zmiany",
  zakonczony: "obserwowanie zakończone",
};

// A name without its folders: the server's paths are the operator's business, not the team's.
function lastPart(path) {
  return path.split(/[\\/]/).filter(Boolean).pop() || path;
}

function watchText(watch) {
  const folders = `Obserwowane foldery: ${watch.foldery.map(lastPart).join(", ")}`;
  const pending = watch.oczekujace.length ? `: ${watch.oczekujace.map(lastPart).join(", ")}` : "";
  if (watch.stan === "czeka" && !pending) {
    const when = watch.ostatnia_synchronizacja
      ? ` (ostatnia synchronizacja ${new Date(watch.ostatnia_synchronizacja * 1000).toLocaleTimeString("pl-PL")})` : "";
    return `${folders} – indeks aktualny${when}.`;
  }
  // the file being indexed and how many are done ("postep"); the total is known once all files are read
  const progress = watch.postep || {};
  if (watch.stan === "indeksuje" && progress.plik) {
    const done = progress.razem ? ` – gotowe ${progress.gotowe} z ${progress.razem}` : "";
    return `${folders} – indeksuję: ${progress.plik}${done}.`;
  }
  const doing = WATCH_STATES[watch.stan] || (pending ? "czekają na zaindeksowanie" : watch.stan);
  return `${folders} – ${doing}${pending}.`;
}

let syncsSeen = null;  // the watcher's number of synchronizations when the filters were last loaded

async function loadState() {
  let state;
  try { state = await fetchJson("api/stan"); } catch (_) { return; }  // the page works without it
  $("wyloguj").hidden = !state.token;
  $("wyloguj").textContent = state.uzytkownik ? `Wyloguj (${state.uzytkownik})` : "Wyloguj";
  const watch = state.obserwowanie;
  const box = $("obserwowanie");
  box.hidden = !watch;
  if (!watch) return;
  box.textContent = watchText(watch) + (watch.blad ? ` ${watch.blad}` : "");
  box.className = watch.blad ? "blad" : "";
  // the watcher has indexed something: the file filter learns the new files (and forgets removed ones)
  if (syncsSeen !== null && watch.synchronizacje !== syncsSeen) loadFilters();
  syncsSeen = watch.synchronizacje;
  if (watch.stan !== "zakonczony") setTimeout(loadState, STATE_EVERY_MS);
}

async function logout() {
  try {
    await fetchJson("/wylogowanie", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    window.location.assign("/logowanie");  // not "/": the browser may show it from its cache
  } catch (error) {
    say(error.message, true);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("formularz").addEventListener("submit", search);
  $("zapytaj").addEventListener("click", ask);
  $("zatrzymaj").addEventListener("click", () => streaming && streaming.abort());
  copyOnClick($("kopiuj-odpowiedz"), () => answerWithSources);
  setUpPicker();
  setUpPanel();
  setUpFilterToggle();
  $("wyloguj").addEventListener("click", logout);
  $("nowa-rozmowa").addEventListener("click", newConversation);
  $("usun-rozmowy").addEventListener("click", deleteAll);
  $("ponow").addEventListener("click", regenerate);
  $("popraw").addEventListener("click", () => lastTurn && editTurn($("tury").children.length + 1, lastTurn.pytanie));
  loadConversations();
  $("pytanie").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); ask(); }
  });
  window.addEventListener("popstate", () => {
    if (fillFromAddress()) search(null, true);
    else { $("wyniki-sekcja").hidden = true; clearAnswer(); showPlan(null); say(""); }
  });
  showHistory();
  loadState();
  const saved = new URLSearchParams(window.location.search).get("rozmowa");
  loadFilters().then(() => {
    if (saved) openConversation(saved);
    else if (fillFromAddress()) search(null, true);
  });
});
