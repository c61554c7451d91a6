// Terminal sessions in the web UI: the REST API /api/terminals and the WebSocket /ws/pty/{id}
// (binary frames carry the terminal's bytes both ways, JSON text frames the control), drawn by
// xterm.js (vendored in this directory: xterm.js, xterm-addon-fit.js; see ../licenses/).
import { el } from "./render.js";

const $ = (id) => document.getElementById(id);
const token = sessionStorage.getItem("ccb-token")
  || new URLSearchParams(location.hash.slice(1)).get("token") || "";

const ts = {
  agents: [], terminals: new Map(), current: null, ws: null, term: null, fit: null,
  canType: false, sized: false, status: null, exit: null,
};
window.ccbTerminals = ts; // for tests and debugging

async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  if (token) headers.Authorization = "Bearer " + token;
  if (options.body) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { ...options, headers });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw Object.assign(new Error(body.error || res.statusText), { status: res.status });
  return body;
}

function banner(text, error) {
  const b = $("banner"); delete b.dataset.key; b.textContent = text; b.hidden = !text; b.className = "banner" + (error ? " error" : "");
}

// ------------------------------------------------------------------ agents and the list

async function refresh() {
  try {
    const data = await api("/api/terminals");
    ts.agents = data.agents;
    // A user who may not open terminals does not get the form for it.
    $("new-terminal").hidden = data.allowed === false;
    ts.terminals = new Map(data.terminals.map((t) => [t.id, t]));
    renderAgents();
    if (ts.current) showHeader();
  } catch (err) {
    // 404: the server runs without terminals (serve --no-terminals): offer none. Other
    // trouble is the chat UI's banner's to report.
    if (err.status === 404) $("new-terminal").hidden = true;
  }
}

function renderAgents() {
  const select = $("term-agent");
  const chosen = select.value;
  select.replaceChildren();
  const missing = $("term-missing");
  missing.replaceChildren();
  for (const a of ts.agents) {
    select.append(el("option", {
      value: a.name, text: a.available ? a.name : a.name + " (not installed)",
      title: a.available ? a.path || "" : "Install: " + a.install_hint,
      ...(a.available ? {} : { disabled: "" }),
    }));
    if (!a.available) {
      missing.append(el("li", { class: "unavailable", "data-agent": a.name },
        el("span", { class: "name", text: a.name }),
        el("code", { text: a.install_hint })));
    }
  }
  const available = ts.agents.filter((a) => a.available).map((a) => a.name);
  select.value = available.includes(chosen) ? chosen : available.includes("claude") ? "claude" : available[0] || "";
}

// ------------------------------------------------------------------ the terminal view

function ensureTerminal() {
  if (ts.term) return;
  ts.term = new window.Terminal({
    cursorBlink: true, fontFamily: "ui-monospace, Menlo, monospace", fontSize: 13, scrollback: 5000,
  });
  ts.fit = new window.FitAddon.FitAddon();
  ts.term.loadAddon(ts.fit);
  ts.term.open($("term-screen"));
  const encoder = new TextEncoder();
  ts.term.onData((data) => {
    if (ts.ws && ts.ws.readyState === WebSocket.OPEN && ts.canType) ts.ws.send(encoder.encode(data));
  });
  ts.term.onBinary((data) => {
    if (ts.ws && ts.ws.readyState === WebSocket.OPEN && ts.canType) {
      ts.ws.send(Uint8Array.from(data, (c) => c.charCodeAt(0) & 255));
    }
  });
}

function fitAndResize() {
  if (!ts.term || $("terminal").hidden) return;
  ts.fit.fit();
  if (ts.ws && ts.ws.readyState === WebSocket.OPEN && ts.canType) {
    ts.ws.send(JSON.stringify({ type: "resize", cols: ts.term.cols, rows: ts.term.rows }));
  }
}

function hideTerminal() {
  $("terminal").hidden = true;
  if (ts.ws) { ts.ws.onclose = null; ts.ws.close(); ts.ws = null; }
  ts.current = null;
}

function showHeader() {
  const t = ts.terminals.get(ts.current);
  $("terminal-title").textContent = t ? t.agent + " · " + t.cwd : ts.current;
  const state = ts.exit ? "closed" : ts.status ? ts.status.state : "starting";
  const badge = $("terminal-state");
  badge.textContent = ts.exit
    ? "exited" + (ts.exit.code !== null ? " (" + ts.exit.code + ")" : ts.exit.signal_name ? " (" + ts.exit.signal_name + ")" : "")
    : state === "waiting" ? "waiting for you" : state;
  badge.className = "badge " + state;
  $("terminal-typing").textContent = ts.exit ? "" : ts.canType ? "" : "view only";
  $("terminal-stop").disabled = Boolean(ts.exit);
  // An ended terminal can leave the list (a running one is stopped first, on purpose).
  $("terminal-remove").hidden = !ts.exit;
}

function open(id) {
  ensureTerminal();
  if (ts.ws) { ts.ws.onclose = null; ts.ws.close(); }
  ts.current = id; ts.sized = false; ts.status = null; ts.exit = null; ts.canType = false;
  $("landing").hidden = true; $("session").hidden = true; $("terminal").hidden = false;
  $("sidebar").classList.remove("open");
  ts.term.reset();
  if (!ts.terminals.has(id)) refresh();
  showHeader();
  const url = new URL("/ws/pty/" + encodeURIComponent(id), location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  if (token) url.searchParams.set("token", token);
  const ws = new WebSocket(url.href);
  ws.binaryType = "arraybuffer";
  ts.ws = ws;
  ws.onmessage = (msg) => {
    if (typeof msg.data !== "string") {
      ts.term.write(new Uint8Array(msg.data));
      if (!ts.sized) { ts.sized = true; setTimeout(fitAndResize, 0); } // after the current screen
      return;
    }
    const f = JSON.parse(msg.data);
    if (f.type === "status") {
      ts.status = f; ts.canType = f.can_type;
      if (!ts.sized) ts.term.resize(f.cols, f.rows); // the current screen is drawn at this size
    } else if (f.type === "resize") {
      if (f.cols !== ts.term.cols || f.rows !== ts.term.rows) ts.term.resize(f.cols, f.rows);
    } else if (f.type === "exit") {
      ts.exit = f;
    } else if (f.type === "error") {
      banner(f.message, true);
    }
    showHeader();
  };
  ws.onclose = (ev) => {
    if (ts.ws !== ws) return;
    if (!ts.exit && ev.code === 1013) banner("The terminal view fell behind; reopen it for a fresh screen.", true);
    showHeader();
  };
  ts.term.focus();
}

// ------------------------------------------------------------------ controls

$("new-terminal").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const form = new FormData(ev.target);
  ensureTerminal();
  $("terminal").hidden = false; $("landing").hidden = true; $("session").hidden = true;
  ts.fit.fit();
  const body = { agent: form.get("agent"), cols: ts.term.cols, rows: ts.term.rows };
  if (form.get("cwd")) body.cwd = form.get("cwd");
  api("/api/terminals", { method: "POST", body: JSON.stringify(body) })
    .then((t) => { ts.terminals.set(t.id, t); banner(""); open(t.id); })
    .catch((err) => banner(err.message, true));
});
$("terminal-stop").addEventListener("click", () => {
  if (!ts.current) return;
  api("/api/terminals/" + encodeURIComponent(ts.current), { method: "DELETE" })
    .then(refresh).catch((err) => banner(err.message, true));
});
$("terminal-remove").addEventListener("click", () => {
  const id = ts.current;
  if (!id) return;
  api("/api/terminals/" + encodeURIComponent(id) + "/remove", { method: "POST" })
    .then(() => { ts.terminals.delete(id); banner(""); $("new-chat").click(); })
    .catch((err) => banner(err.message, true));
});
// Picking a session in the list (a chat one, or another terminal), or starting a chat
// session, leaves this terminal; the session list (app.js) opens terminals through this.
$("sessions").addEventListener("click", hideTerminal, true);
$("start").addEventListener("submit", hideTerminal, true);
$("new-chat").addEventListener("click", hideTerminal, true);
window.addEventListener("popstate", hideTerminal);
window.ccbOpenTerminal = open;

let resizeTimer = null;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(fitAndResize, 100);
});

refresh();
// Agents may be installed while the page is open: look again when the form is used.
$("term-agent").addEventListener("focus", refresh);
