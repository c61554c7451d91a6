// What the banner says about a session that failed: what happened, in words chosen by the
// failure's kind (the chat's last error event, or the session's status), and what the person
// can do. The CLI's own text (exit codes, stderr, internal paths) is only the detail, shown
// folded and as text: it helps whoever reports the problem, but is no sentence to lead with.

import { el } from "./dom.js";

// The kinds of error event (adapter.events.ErrorKind) a session ends with.
const HAPPENED = {
  cli_exited: "The Claude Code CLI stopped, so this session ended.",
  protocol: "The Claude Code CLI wrote something the server could not read, so this session ended.",
  internal: "The server hit an internal error and ended this session.",
  api_error: "The Claude API answered with an error and the CLI stopped, so this session ended.",
};

// The error event the session ended with: the last one since the last prompt (an error of
// an earlier turn, which the session outlived, is not this failure).
function lastError(chat) {
  if (!chat) return null;
  let found = null;
  for (const e of chat.entries.values()) {
    if (e.kind === "error") found = e;
    else if ((e.kind === "user" || e.kind === "command") && !e.parent_id) found = null;
  }
  return found;
}

// { text, detail, entry } for a failed session; history: the stored sessions (list_history).
// entry: the id of the chat's error line this describes (or null). The banner is the one
// place a failure shows while the session is failed, so that line is hidden meanwhile.
export function failure(session, chat, history) {
  const error = lastError(chat);
  const entry = error ? error.id : null;
  if (session.status === "lost") {
    return { text: "The server running this session stopped answering; it is being resumed on another one.",
      detail: session.status_reason || "", entry };
  }
  const happened = HAPPENED[error && error.error_kind] || "This session ended with an error.";
  const stored = session.cli_session_id && history.some((h) => h.session_id === session.cli_session_id);
  const todo = stored
    ? "Its conversation is kept: resume it from the history, or start a new session."
    : "Start a new session to go on.";
  return { text: happened + " " + todo, detail: session.status_reason || (error && error.message) || "", entry };
}

// The chat's line for an error event: the session-ending kinds and API errors in words, their
// raw text folded; any other error (a failed turn) says what it is in its own words.
const ENDED = {
  cli_exited: "The Claude Code CLI stopped.",
  protocol: "The Claude Code CLI wrote something the server could not read.",
  internal: "The server hit an internal error.",
};

// What an API error's HTTP status means, in a few words.
const STATUS = {
  400: "invalid request", 401: "authentication failed", 403: "permission denied",
  404: "not found", 408: "request timed out", 413: "request too large", 429: "rate limited",
  500: "internal server error", 502: "bad gateway", 503: "unavailable", 504: "gateway timeout",
  529: "overloaded",
};

// A failed turn's API error: one line saying so, with the status; the CLI's text ("API Error:
// 529 ...", which it also wrote as the turn's answer: adapter.chat keeps it only here) folded.
function apiErrorNote(e) {
  const status = typeof e.status === "number" ? e.status : null;
  const what = status === null ? "Claude API error" : "Claude API error " + status + (STATUS[status] ? " (" + STATUS[status] + ")" : "");
  return el("div", { class: "note error api-error", "data-id": e.id, "data-status": status === null ? undefined : String(status) },
    el("strong", { text: what }), ": this turn failed. Send your message again to retry.",
    e.message || e.request_id ? el("details", {}, el("summary", { text: "Details" }),
      e.message ? el("pre", { text: e.message }) : null,
      e.request_id ? el("p", { class: "request-id", text: "Request id: " + e.request_id }) : null) : null);
}

export function errorNote(e) {
  if (e.error_kind === "api_error") return apiErrorNote(e);
  const words = ENDED[e.error_kind];
  if (!words) return el("div", { class: "note error", "data-id": e.id, text: "Error: " + e.message });
  return el("div", { class: "note error", "data-id": e.id }, words,
    e.message ? el("details", {}, el("summary", { text: "Details" }), el("pre", { text: e.message })) : null);
}
