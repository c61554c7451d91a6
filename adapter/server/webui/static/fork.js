// "Fork from here": under each finished turn of a session, a control that starts a new
// session resuming the CLI's conversation at that turn's last message (create_session with
// resume, resume_session_at and fork). The server shows the new session the stored
// conversation up to that message; the page adds a line saying where it came from.
// app: { state, request, banner, select }.
import { el } from "./dom.js";

// A prompt's first line, short enough for a label.
function gist(text) {
  const line = (text || "").trim().split("\n")[0];
  return line.length > 60 ? line.slice(0, 59) + "…" : line;
}

// What each turn's control is named after: its number and the prompt that started it.
function promptsOf(chat) {
  const prompts = new Map();   // the id a turn ended after -> the prompt text before it
  const ends = new Set(chat.turns.map((t) => t.after));
  let prompt = "";
  for (const e of chat.entries.values()) {
    if (e.parent_id) continue;
    if (e.kind === "user") prompt = e.text || (e.images ? "an image" : "");
    else if (e.kind === "command") prompt = "/" + e.name;
    if (ends.has(e.id)) prompts.set(e.id, prompt);
  }
  return prompts;
}

// Why a fork did not start, in words (the CLI's own text stays in the server's log).
const REASONS = {
  cli_error: "the CLI could not resume the conversation at that message",
  history_not_found: "the stored conversation is not on this server",
  session_in_use: "the conversation is in use",
  too_many_sessions: "the server runs as many sessions as it may; close one first",
  forbidden: "you may not resume that conversation",
  unavailable: "sessions are unavailable right now; try again in a moment",
  bad_request: "the server could not start a session there",
};
const reason = (err) => REASONS[err.code] || (err.code ? "the server refused (" + err.code + ")" : "the connection was lost");

export function forking(app) {
  const { state, request, banner, select } = app;
  const origins = new Map();   // forked session id -> "Forked from <title> at turn N"

  function fork(turn) {
    const sid = state.current;
    const s = state.sessions.get(sid) || {};
    const chat = state.chats.get(sid);
    const title = s.title || "this session";
    // The CLI session the turn is in: a resumed session's stored turns are its source's.
    const resume = turn.cli_session_id || s.cli_session_id || (chat && chat.cliSessionId);
    const where = "“" + title + "” at turn " + turn.number;
    if (!resume) {
      banner("Could not fork " + where + ": the CLI has not named this conversation yet.", true);
      return Promise.resolve();
    }
    const frame = {
      type: "create_session", origin: "webui", resume, resume_session_at: turn.last_message_uuid, fork: true,
      ...(s.cwd ? { cwd: s.cwd } : {}),
      ...((chat && chat.model) || s.model ? { model: (chat && chat.model) || s.model } : {}),
    };
    banner("Forking " + where + "…");
    return request(frame).then((ack) => {
      banner("");
      origins.set(ack.session_id, "Forked from " + where);
      state.sessions.set(ack.session_id, ack.session);
      select(ack.session_id);
      // The list tells the fork apart from its source (renamable like any title).
      return request({ type: "update_session", session_id: ack.session_id, title: title + " (fork at turn " + turn.number + ")" })
        .then((done) => { state.sessions.set(done.session.id, done.session); })
        .catch(() => {});   // the fork stands without its title
    }).catch((err) => {
      banner("Could not fork " + where + ": " + reason(err) + ".", true);
    });
  }

  // Put each finished turn's control right after the entry the turn ended with (entries
  // redrawn in place keep it there; later entries come after it).
  function place(box, chat) {
    const s = state.sessions.get(state.current) || {};
    const known = !!(s.cli_session_id || chat.cliSessionId);
    const prompts = promptsOf(chat);
    for (const turn of chat.turns) {
      const after = turn.after && box.querySelector(`:scope > [data-id="${CSS.escape(turn.after)}"]`);
      let mark = box.querySelector(`:scope > .turn-end[data-turn="${turn.number}"]`);
      if (!after || !(turn.cli_session_id || known)) { if (mark) mark.remove(); continue; }
      if (!mark) {
        const prompt = gist(prompts.get(turn.after));
        const label = "Fork from here: turn " + turn.number + (prompt ? " (“" + prompt + "”)" : "");
        mark = el("div", { class: "turn-end", "data-turn": turn.number },
          el("button", { type: "button", class: "small fork", text: "Fork from here", "aria-label": label,
            title: "Start a new session from the conversation up to here", onclick: () => fork(turn) }));
      }
      if (after.nextElementSibling !== mark) after.after(mark);
    }
  }

  // The line at the top of a fork this page started (the server shows the conversation).
  function origin(box, id) {
    const text = origins.get(id);
    if (text) box.prepend(el("p", { class: "note forked", text }));
  }

  return { place, origin, fork };
}
