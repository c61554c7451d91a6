// The built-in web UI: speaks only the WebSocket protocol of adapter.server.ws (docs/ws-schema.json).
import { agentPicker } from "./agents.js";
import { Chat } from "./chat.js";
import { Composer } from "./composer.js";
import { failure } from "./failure.js";
import { forking } from "./fork.js";
import { sessionList } from "./sessions.js";
import "./theme.js";
import { imageCache, thumbnails } from "./images.js";
import { el, renderEntry } from "./render.js";

const $ = (id) => document.getElementById(id);

// The address names what is shown: "#/s/<session id>" a session, nothing the landing page.
// "#token=T" (also "#/s/<id>&token=T", a link for another device) hands the page the token;
// it is kept for the tab and taken out of the address.
function parseHash() {
  const raw = location.hash.slice(1);
  const m = /^\/s\/([^&]+)(?:&(.*))?$/.exec(raw);
  if (m) return { session: decodeURIComponent(m[1]), params: new URLSearchParams(m[2] || "") };
  return { session: null, params: new URLSearchParams(raw.startsWith("/") ? "" : raw) };
}
const sessionUrl = (id) => "#/s/" + encodeURIComponent(id);
const initial = parseHash();
const token = initial.params.get("token") || sessionStorage.getItem("ccb-token") || "";
if (initial.params.get("token")) {
  sessionStorage.setItem("ccb-token", token);
  history.replaceState(null, "", initial.session ? sessionUrl(initial.session) : location.pathname);
}

const state = {
  ws: null, connected: false, retry: 0, nextId: 1, waiting: new Map(),
  sessions: new Map(), current: null, chats: new Map(), subscribed: new Set(),
  history: [],              // the CLI's stored sessions (list_history)
  unavailable: new Map(),   // session id -> { tries, timer }: resubscribing after "unavailable"
};
window.ccbState = state; // for tests and debugging

// ------------------------------------------------------------------ connection

function wsUrl() {
  const url = new URL("/ws", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  if (token) url.searchParams.set("token", token);
  return url.href;
}

function setConn(text, cls) { const c = $("conn"); c.textContent = text; c.className = "conn " + (cls || ""); }

function connect() {
  setConn(state.retry ? "reconnecting…" : "connecting…");
  const ws = new WebSocket(wsUrl());
  state.ws = ws;
  ws.onopen = () => {
    state.connected = true; state.retry = 0; setConn("connected", "ok"); banner("");
    request({ type: "hello", version: 1 }).then((ack) => agents.show(ack.agents)).catch(() => {});
    // Watch the session list: every session's state changes (badges, notifications).
    request({ type: "list_sessions" }).catch(() => {});
    sessions.loadHistory();
    // Resume what we showed: events after the last one we have, nothing twice.
    for (const id of state.subscribed) subscribe(id, true);
  };
  ws.onmessage = (msg) => onFrame(JSON.parse(msg.data));
  ws.onclose = (ev) => {
    state.connected = false;
    for (const [, p] of state.waiting) p.reject(new Error("connection lost"));
    state.waiting.clear();
    const why = ev.code === 4001 ? "fell behind" : ev.code === 4401 || ev.code === 1008 ? "refused" : "lost";
    setConn("connection " + why + " — reconnecting…", "bad");
    state.retry += 1;
    setTimeout(connect, Math.min(500 * 2 ** Math.min(state.retry, 4), 8000));
  };
}

function send(frame) {
  if (!state.connected) throw new Error("not connected");
  state.ws.send(JSON.stringify(frame));
}

function request(frame) {
  const id = "c" + state.nextId++;
  return new Promise((resolve, reject) => {
    state.waiting.set(id, { resolve, reject });
    try { send({ ...frame, request_id: id }); } catch (err) { state.waiting.delete(id); reject(err); }
  });
}

// detail: text for a folded "Details" under the message (a failure's raw words). The same
// message again leaves the banner as it is (a details element someone opened stays open).
function banner(text, error, detail) {
  const b = $("banner");
  const key = JSON.stringify([text, !!error, detail || ""]);
  if (b.dataset.key === key) return;
  b.dataset.key = key;
  b.replaceChildren(text);
  if (detail) b.append(el("details", {}, el("summary", { text: "Details" }), el("pre", { text: detail })));
  b.hidden = !text; b.className = "banner" + (error ? " error" : "");
  delete b.dataset.failure;
}

// ------------------------------------------------------------------ frames

function onFrame(f) {
  const waiter = f.request_id !== undefined && state.waiting.get(f.request_id);
  if (waiter && ["ack", "error", "pong", "history", "session_list", "image"].includes(f.type)) {
    state.waiting.delete(f.request_id);
    if (f.type === "error") waiter.reject(Object.assign(new Error(f.message), { code: f.code }));
    else waiter.resolve(f);
  } else if (f.type === "error" && f.code === "unavailable" && state.subscribed.has(f.session_id)) {
    retryLater(f.session_id, f.message);   // the server lost its backend: back soon, no gap
  } else if (f.type === "error") {
    banner(f.message, true);
  }
  switch (f.type) {
    case "session_list":
      state.sessions = new Map(f.sessions.map((s) => [s.id, s]));
      sessions.render();
      break;
    case "session_changed": {
      if (f.session.removed) {   // deleted, or closed and forgotten by the server
        state.sessions.delete(f.session.id); state.chats.delete(f.session.id); state.subscribed.delete(f.session.id);
        if (f.session.id === state.current) { history.replaceState(null, "", location.pathname); showLanding(false); }
        sessions.render();
        break;
      }
      const before = state.sessions.get(f.session.id);
      state.sessions.set(f.session.id, f.session);
      if (f.session.state === "waiting" && (!before || before.state !== "waiting")) notify(f.session);
      sessions.render();
      if (f.session.id === state.current) { renderHeader(); refreshPermissions(); placeTurns(); }
      break;
    }
    case "snapshot": {
      const chat = Chat.fromSnapshot(f.chat);
      state.chats.set(f.session_id, chat);
      state.sessions.set(f.session_id, f.session);
      if (f.session_id === state.current) renderChat();
      sessions.render();
      break;
    }
    case "event": {
      const chat = state.chats.get(f.session_id);
      if (!chat) break;
      const changed = chat.apply(f.event);
      if (f.session_id === state.current) {
        for (const id of changed) renderOne(chat, id);
        if (f.event.type === "complete" || f.event.type === "session_status") placeTurns();
        renderHeader();
      }
      break;
    }
  }
}

function subscribe(id, resume) {
  const chat = state.chats.get(id);
  const frame = { type: "subscribe", session_id: id };
  if (resume && chat) frame.since_seq = chat.lastSeq;
  state.subscribed.add(id);
  if (!state.connected) return Promise.resolve();   // the socket's onopen subscribes it
  return request(frame).then(() => {
    if (state.unavailable.delete(id) && !state.unavailable.size) banner("");
  }).catch((err) => {
    if (err.code === "unknown_session") {
      state.subscribed.delete(id); state.chats.delete(id);
      if (id === state.current) {
        history.replaceState(null, "", location.pathname); showLanding(false);
        banner("That session is not on this server (any more).", true);
      }
      return;
    }
    if (err.code === "unavailable") retryLater(id, err.message);
    else banner(err.message, true);
  });
}

// A server that lost its backend (a gateway without NATS) ends the subscription with an
// "unavailable" error: subscribe again after the last event we have, backing off, and say so.
function retryLater(id, why) {
  const retry = state.unavailable.get(id) || { tries: 0, timer: null };
  if (retry.timer) return;
  retry.tries += 1;
  const delay = Math.min(500 * 2 ** Math.min(retry.tries - 1, 4), 8000);
  state.unavailable.set(id, retry);
  banner("Sessions are unavailable (" + why + ") — retrying in " + Math.round(delay / 1000) + " s…", true);
  retry.timer = setTimeout(() => {
    retry.timer = null;
    if (state.connected && state.subscribed.has(id)) subscribe(id, true);
  }, delay);
}

// ------------------------------------------------------------------ sessions

// Show a session; "push" records it in the browser's history (not when the address led here).
function select(id, push = true) {
  if (push && parseHash().session !== id) history.pushState(null, "", sessionUrl(id));
  state.current = id;
  $("sidebar").classList.remove("open"); $("menu").setAttribute("aria-expanded", "false");
  $("landing").hidden = true;
  $("session").hidden = false;
  if (!state.subscribed.has(id)) subscribe(id, false);
  sessions.render();
  renderChat();
}

// The landing page: a composer for a new session.
function showLanding(push = true) {
  if (push && location.hash) history.pushState(null, "", location.pathname);
  state.current = null;
  if ($("banner").dataset.failure) banner("");   // that session's failure
  $("sidebar").classList.remove("open"); $("menu").setAttribute("aria-expanded", "false");
  $("session").hidden = true;
  $("landing").hidden = false;
  sessions.render();
  $("start-prompt").focus();
}

function notify(session) {
  if (session.id === state.current && !document.hidden) return;
  if (window.Notification && Notification.permission === "granted") {
    new Notification("Claude needs your approval", { body: session.title || session.id, tag: session.id });
  }
}

// ------------------------------------------------------------------ chat

const fetchImage = imageCache(request);

const pendingOf = () => new Set((state.sessions.get(state.current) || {}).pending_permissions || []);

// What the entries' DOM needs: the answers it sends, and what it looks up in the chat.
function context(chat) {
  const sid = state.current;
  const pending = pendingOf();
  const byTool = (kind) => (id) => {
    for (const e of chat.entries.values()) if (e.kind === kind && e.tool_call_id === id) return e;
    return null;
  };
  return {
    pending: (p) => pending.has(p),
    hasTool: (id) => chat.entries.has(id),
    permissionFor: byTool("permission"),
    questionFor: byTool("question"),
    thumbnails: (entry, count) => thumbnails(sid, entry, count, fetchImage),
    actions: {
      answer: (pending_id, decision, updated_input, message) => request({
        type: "permission_response", session_id: sid, pending_id, decision,
        ...(decision !== "deny" && updated_input ? { updated_input } : {}),
        ...(decision === "deny" && message ? { message } : {}),
      }),
      answerQuestion: (pending_id, answers) => request({ type: "question_response", session_id: sid, pending_id, answers }),
      declineQuestion: (pending_id, message) => request({
        type: "question_response", session_id: sid, pending_id, decline: true, ...(message ? { message } : {}),
      }),
    },
  };
}

function renderOne(chat, id) {
  const entry = chat.entries.get(id);
  const box = $("chat");
  if (!entry) {  // merged into another entry
    const gone = box.querySelector(`[data-id="${CSS.escape(id)}"]`);
    if (gone) gone.remove();
    return;
  }
  const node = renderEntry(entry, context(chat));
  const old = box.querySelector(`[data-id="${CSS.escape(id)}"]`);
  if (old) {
    const kids = old.querySelector(":scope > .children");
    const keep = node.querySelector(":scope > .children");
    if (kids && keep) keep.replaceWith(kids);
    if (old.tagName === "DETAILS" && old.open) node.open = true;
    const body = old.querySelector(":scope > .body"), nbody = node.querySelector(":scope > .body");
    const head = node.querySelector(":scope > .head[aria-expanded]");
    if (body && nbody) { nbody.hidden = body.hidden; if (head) head.setAttribute("aria-expanded", String(!body.hidden)); }
    // An open card being filled in is kept as it is while it stays open.
    if (old.dataset.state === "open" && node.dataset.state === "open") return;
    old.replaceWith(node);
  } else {
    const parent = entry.parent_id && box.querySelector(`[data-id="${CSS.escape(entry.parent_id)}"] > .children`);
    const stick = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
    (parent || box).append(node);
    if (stick) box.scrollTop = box.scrollHeight;
  }
  // A decision to make comes into view; its tool card shows the wait, then the decision.
  if ((entry.kind === "permission" || entry.kind === "question") && node.matches(".card:not(.closed)")) {
    node.scrollIntoView({ block: "nearest" });
  }
  if ((entry.kind === "permission" || entry.kind === "question") && entry.tool_call_id && chat.entries.has(entry.tool_call_id)) {
    renderOne(chat, entry.tool_call_id);
  }
}

function renderChat() {
  const chat = state.chats.get(state.current);
  $("chat").replaceChildren();
  if (!chat) return;
  forks.origin($("chat"), state.current);
  for (const id of chat.entries.keys()) renderOne(chat, id);
  placeTurns();
  renderHeader();
  $("chat").scrollTop = $("chat").scrollHeight;
}

// Each finished turn gets its "Fork from here" (fork.js).
function placeTurns() {
  const chat = state.chats.get(state.current);
  if (chat) forks.place($("chat"), chat);
}

function refreshPermissions() {
  const chat = state.chats.get(state.current);
  if (!chat) return;
  for (const entry of chat.entries.values()) if (entry.kind === "permission" || entry.kind === "question") renderOne(chat, entry.id);
}

function renderHeader() {
  const s = state.sessions.get(state.current);
  const chat = state.chats.get(state.current);
  if (!s) return;
  $("session-title").textContent = s.title || "Untitled session";
  $("session-title").title = s.cwd || "";
  // The named agent it started from (serve --agents), as text: the name is the agents file's.
  $("session-agent").textContent = s.named_agent ? "Agent: " + s.named_agent : "";
  $("session-agent").hidden = !s.named_agent;
  $("archive").textContent = s.archived ? "Unarchive" : "Archive";
  $("delete").hidden = !(s.state === "closed" || s.state === "errored");
  const badge = $("session-state");
  badge.textContent = s.state === "waiting" ? "waiting for you" : s.state;
  badge.className = "badge " + s.state;
  const why = s.state === "errored" ? failure(s, chat, state.history) : null;
  if (why) {
    banner(why.text, true, why.detail);
    $("banner").dataset.failure = s.id;
  } else if ($("banner").dataset.failure) banner("");   // another session's failure
  foldFailure(why && why.entry);
  if (chat) {
    $("cost").textContent = "$" + (chat.usage.cost_usd || 0).toFixed(4);
    const pct = chat.context ? chat.context.percent : 0;
    $("context").value = pct;
    $("context-text").textContent = chat.context ? Math.round(pct) + "% context" : "";
    if (document.activeElement !== $("model")) $("model").value = chat.model || s.model || "";
    if (document.activeElement !== $("mode")) $("mode").value = chat.mode || s.permission_mode || "default";
    const todos = $("todos");
    todos.replaceChildren(...chat.todos.map((t) => el("li", { class: t.status || "", text: t.description || "" })));
    todos.hidden = chat.todos.length === 0;
  }
  $("interrupt").disabled = !(s.state === "busy" || s.state === "waiting");
  $("composer").querySelector("button[type=submit]").disabled = s.state === "closed" || s.state === "errored";
}

// A failed session's failure shows once: in the banner (role=alert, what happened, what to
// do, the reason folded). The chat's line for the same error is hidden while the banner
// says it, and back when the session is (a cluster session resumed elsewhere): then it is
// the record of where the session was cut off.
function foldFailure(id) {
  for (const node of $("chat").querySelectorAll(".note.error[data-failure]")) {
    if (node.dataset.id === id) continue;
    node.hidden = false; delete node.dataset.failure;
  }
  const node = id && $("chat").querySelector(`.note.error[data-id="${CSS.escape(id)}"]`);
  if (node) { node.hidden = true; node.dataset.failure = ""; }
}

// ------------------------------------------------------------------ controls

function guard(promise) { return promise.catch((err) => banner(err.message, true)); }

const agents = agentPicker({ field: $("start-agent"), select: $("start-agent-select"), about: $("start-agent-about") });
const forks = forking({ state, request, banner, select });
const sessions = sessionList({ state, request, guard, banner, select, showLanding, renderHeader: () => renderHeader() });

// Start by typing: create the session with the settings given (the server refuses a directory
// that is not one, before any CLI starts), then send the prompt, if any, as its first turn.
function startError(text) {
  const box = $("start-error");
  box.textContent = text; box.hidden = !text;
}

$("start").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const form = new FormData(ev.target);
  const text = String(form.get("prompt") || "");
  const frame = { type: "create_session", origin: "webui" };
  for (const key of ["named_agent", "cwd", "model", "effort", "permission_mode", "policy"]) {
    const value = String(form.get(key) || "").trim();
    if (value) frame[key] = value;
  }
  const button = ev.target.querySelector("button[type=submit]");
  button.disabled = true;
  startError("");
  banner("Starting a session…");
  request(frame).then((ack) => {
    banner("");
    state.sessions.set(ack.session_id, ack.session);
    $("start-prompt").value = "";
    select(ack.session_id);
    $("prompt").focus();
    if (text.trim()) return request({ type: "prompt", session_id: ack.session_id, text });
    return null;
  }).catch((err) => {
    banner("");
    startError(err.message);
    if (/working directory/.test(err.message)) {
      $("start-settings").open = true;
      ev.target.elements.cwd.focus();
    }
  }).finally(() => { button.disabled = false; });
});
$("start-prompt").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); $("start").requestSubmit(); }
});
$("new-chat").addEventListener("click", () => showLanding());

// Back / forward (and an address typed or pasted) show what the address names.
function route() {
  const { session } = parseHash();
  if (session) select(session, false);
  else if (state.current !== null) showLanding(false);
}
window.addEventListener("popstate", route);

$("composer").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("prompt").value;
  const images = composer.images();
  if ((!text.trim() && !images.length) || !state.current) return;
  guard(request({ type: "prompt", session_id: state.current, text, ...(images.length ? { images } : {}) }).then(() => {
    $("prompt").value = ""; composer.clear();
  }));
});
$("prompt").addEventListener("keydown", (ev) => {
  if (composer.pickerKey(ev)) return;
  if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); $("composer").requestSubmit(); }
});
// Touch devices have no Enter-to-send habit: the Send button is the way.
if (window.matchMedia && matchMedia("(pointer: coarse)").matches) {
  $("prompt").placeholder = "Message Claude";
  $("start-prompt").placeholder = "What should Claude work on?";
}
const composer = new Composer({
  prompt: $("prompt"), list: $("slash"), attachments: $("attachments"), attach: $("attach"), input: $("attach-input"),
  commands: () => { const chat = state.chats.get(state.current); return chat ? chat.commands : []; },
  error: (text) => banner(text, true),
});
window.ccbComposer = composer; // for tests and debugging
document.addEventListener("keydown", (ev) => {
  if (ev.key === "Escape" && document.querySelector("dialog[open]")) return;   // closes the dialog
  if (ev.key === "Escape" && state.current && !$("interrupt").disabled) $("interrupt").click();
});
$("interrupt").addEventListener("click", () => guard(request({ type: "interrupt", session_id: state.current })));
$("close-session").addEventListener("click", () => guard(request({ type: "close_session", session_id: state.current })));
$("model").addEventListener("change", (ev) => guard(request({ type: "set_model", session_id: state.current, model: ev.target.value || null })));
$("mode").addEventListener("change", (ev) => guard(request({ type: "set_permission_mode", session_id: state.current, mode: ev.target.value })));
$("menu").addEventListener("click", () => {
  const open = $("sidebar").classList.toggle("open");
  $("menu").setAttribute("aria-expanded", String(open));
  if (open) $("new-chat").focus();
});
$("more").addEventListener("click", () => {
  const open = $("session-tools").classList.toggle("open");
  $("more").setAttribute("aria-expanded", String(open));
});

if (window.Notification && Notification.permission === "default") {
  $("notify").hidden = false;
  $("notify").addEventListener("click", () => Notification.requestPermission().then(() => { $("notify").hidden = true; }));
}

connect();
if (initial.session) select(initial.session, false);
else $("start-prompt").focus();
