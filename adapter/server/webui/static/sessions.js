// The session list and the stored history beside it: rows people can tell apart, one search
// over both, Resume and Fork from the history, and rename / archive / delete of the session
// shown. app: { state, request, guard, banner, select, showLanding, renderHeader }.
import { el } from "./dom.js";

const $ = (id) => document.getElementById(id);

export function sessionList(app) {
  const { state, request, guard, banner, select, showLanding, renderHeader } = app;

  // What tells sessions apart: title, the named agent it started from, when, where, who
  // started it, cost.
  const ORIGINS = { webui: "web UI", websocket: "WebSocket client", "ag-ui": "AG-UI", acp: "editor (ACP)", rest: "REST", terminal: "terminal" };

  function ago(seconds) {
    const d = Math.max(0, Date.now() / 1000 - seconds);
    if (d < 45) return "just now";
    if (d < 3600) return Math.round(d / 60) + " min ago";
    if (d < 86400) return Math.round(d / 3600) + " h ago";
    return Math.round(d / 86400) + " d ago";
  }

  const basename = (path) => (path || "").replace(/\/+$/, "").split("/").pop() || path || "";
  const query = () => $("search").value.trim().toLowerCase();
  const matches = (q, ...fields) => !q || fields.some((f) => (f || "").toLowerCase().includes(q));

  function render() {
    const list = $("sessions");
    list.replaceChildren();
    const q = query();
    const archived = $("show-archived").checked;
    const sessions = [...state.sessions.values()]
      .filter((s) => (archived ? s.archived : !s.archived) || (q && s.archived))
      .filter((s) => matches(q, s.title, s.named_agent, s.cwd, ORIGINS[s.origin] || s.origin, s.id))
      .sort((a, b) => (b.last_activity || b.created_at || 0) - (a.last_activity || a.created_at || 0));
    for (const s of sessions) {
      // Terminal sessions (kind "terminal") open in the terminal view (terminal.js).
      const terminal = s.kind === "terminal";
      const open = () => (terminal ? window.ccbOpenTerminal(s.id) : select(s.id));
      const origin = terminal ? "terminal" : s.origin;
      const meta = [ago(s.last_activity || s.created_at || 0), basename(s.cwd), ORIGINS[origin] || origin,
        s.cost_usd ? "$" + s.cost_usd.toFixed(2) : ""].filter(Boolean).join(" · ");
      const button = el("button", { type: "button", class: "row", onclick: open, title: s.cwd || "",
        "aria-current": s.id === state.current ? "page" : null },
        el("span", { class: "name", text: (terminal ? s.title + " (terminal)" : s.title) || "Untitled session" }),
        s.named_agent ? el("span", { class: "named-agent", text: "Agent: " + s.named_agent }) : null,
        el("span", { class: "meta", text: meta + (s.archived ? " · archived" : "") }));
      list.append(el("li", { class: (s.id === state.current ? "current" : "") + (terminal ? " terminal" : ""),
        "data-session": s.id, "data-kind": s.kind || "chat" }, button,
        el("span", { class: "badge " + s.state, text: s.state === "waiting" ? "waiting for you" : s.state })));
    }
    // The tab says when a decision is waiting (also for a session in the background).
    const waiting = [...state.sessions.values()].filter((s) => s.state === "waiting").length;
    document.title = (waiting ? "(" + waiting + ") Decision waiting · " : "") + "claudecode-bridge";
    if (!sessions.length) list.append(el("li", { class: "note", text: q ? "No session matches." : archived ? "No archived session." : "No session yet." }));
    renderHistory();
  }

  // History: the CLI's stored sessions, under the live ones, searched with them.
  function startFrom(frame, what) {
    banner(what + "…");
    return guard(request({ type: "create_session", origin: "webui", ...frame }).then((ack) => {
      banner(""); state.sessions.set(ack.session_id, ack.session); select(ack.session_id);
    }));
  }

  function renderHistory() {
    const list = $("history");
    list.replaceChildren();
    const q = query();
    const shown = state.history.filter((h) => matches(q, h.title, h.cwd, h.session_id)).slice(0, q ? 50 : 8);
    for (const h of shown) {
      const where = { resume: h.session_id, cwd: h.cwd || undefined };
      list.append(el("li", { title: h.cwd || "" },
        el("span", { class: "row" },
          el("span", { class: "name", text: h.title || h.session_id }),
          el("span", { class: "meta", text: [ago(h.last_activity), basename(h.cwd)].filter(Boolean).join(" · ") })),
        el("button", { type: "button", class: "small", text: "Resume", "aria-label": "Resume " + (h.title || h.session_id),
          onclick: () => startFrom(where, "Resuming") }),
        el("button", { type: "button", class: "small", text: "Fork", "aria-label": "Fork " + (h.title || h.session_id),
          onclick: () => startFrom({ ...where, fork: true }, "Forking") })));
    }
    if (!shown.length) list.append(el("li", { class: "note", text: q ? "No stored session matches." : "No stored sessions." }));
  }

  function loadHistory() {
    request({ type: "list_history", limit: 200 }).then((f) => { state.history = f.sessions; renderHistory(); renderHeader(); })
      .catch((err) => banner(err.message, true));
  }
  $("history-refresh").addEventListener("click", loadHistory);
  $("search").addEventListener("input", render);
  $("show-archived").addEventListener("change", render);
  setInterval(render, 30_000);   // the relative times

  // Rename in place; archive / unarchive.
  $("rename").addEventListener("click", () => {
    const s = state.sessions.get(state.current);
    if (!s) return;
    const title = $("session-title");
    const input = el("input", { class: "rename", "aria-label": "Session title", value: s.title || "" });
    let finished = false;
    const done = (save) => {
      if (finished) return;
      finished = true;   // replaceWith blurs the input: that blur must not come back here
      input.replaceWith(title);
      if (save && input.value.trim() && input.value.trim() !== s.title) {
        guard(request({ type: "update_session", session_id: s.id, title: input.value }).then((ack) => {
          state.sessions.set(ack.session.id, ack.session); render(); renderHeader();
        }));
      }
      $("rename").focus();
    };
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") { ev.preventDefault(); done(true); }
      if (ev.key === "Escape") { ev.preventDefault(); ev.stopPropagation(); done(false); }
    });
    input.addEventListener("blur", () => done(true));
    title.replaceWith(input);
    input.focus(); input.select();
  });
  $("delete").addEventListener("click", () => {
    const id = state.current;
    guard(request({ type: "delete_session", session_id: id }).then(() => {
      state.sessions.delete(id); state.chats.delete(id); state.subscribed.delete(id);
      history.replaceState(null, "", location.pathname); showLanding(false);
    }));
  });
  $("archive").addEventListener("click", () => {
    const s = state.sessions.get(state.current);
    if (!s) return;
    guard(request({ type: "update_session", session_id: s.id, archived: !s.archived }).then((ack) => {
      state.sessions.set(ack.session.id, ack.session); render(); renderHeader();
    }));
  });

  return { render, loadHistory };
}
