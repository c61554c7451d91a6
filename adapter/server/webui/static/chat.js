// The chat of one session: the server's snapshot (adapter.chat entries) folded forward with
// the events that follow it. Mirrors adapter/chat/view.py for what the page shows, ids
// included (an entry an event starts is named after its seq, a text run after its message),
// so live events and a snapshot taken later give the same entries; entries are keyed by id
// so an event applied twice (a reconnect) changes nothing.

import { parseUserText } from "./usertext.js";

// The server's JSON leaves out fields at their default value; the live path compares them.
function withDefaults(entry) {
  switch (entry.kind) {
    case "tool": return { status: "running", ...entry };
    case "permission": return { state: "open", ...entry };
    case "question": return { state: "open", ...entry };
    case "command": return { args: "", output: null, ...entry };
    case "interrupt": return { text: "Interrupted", ...entry };
    case "read_group": return { ...entry, reads: entry.reads.map((r) => ({ status: "running", ...r })) };
    default: return entry;
  }
}

export class Chat {
  constructor() {
    this.entries = new Map();   // id -> entry, in display order
    this.lastSeq = 0;
    this.usage = { cost_usd: 0, turns: 0 };
    this.context = null;
    this.model = null;
    this.mode = null;
    this.todos = [];
    this.commands = [];         // the slash commands the CLI offers (names)
    this.cliSessionId = null;   // the CLI's session id (what a resume or fork names)
    // Finished turns, oldest first: { number, last_message_uuid, cli_session_id, after } as adapter.chat's
    // ChatTurn (where the conversation can be forked: the CLI's --resume-session-at).
    this.turns = [];
    this.open = new Map();      // "text|parent" / "reasoning|parent" -> entry id that grows
    this.lastOf = new Map();    // parent -> id of its newest entry
  }

  static fromSnapshot(snap) {
    const chat = new Chat();
    for (const entry of snap.entries || []) chat._add(withDefaults(entry));
    chat.lastSeq = snap.last_seq || 0;
    chat.usage = snap.usage || chat.usage;
    chat.context = snap.context_window || null;
    chat.model = snap.model || null;
    chat.mode = snap.permission_mode || null;
    chat.todos = snap.todos || [];
    chat.commands = snap.commands || [];
    chat.cliSessionId = snap.cli_session_id || null;
    chat.turns = (snap.turns || []).map((t) => ({ cli_session_id: null, after: null, ...t }));
    return chat;
  }

  _add(entry) {
    const parent = entry.parent_id || "";
    this.entries.set(entry.id, entry);
    this.lastOf.set(parent, entry.id);
    this.open.delete("text|" + parent);
    this.open.delete("reasoning|" + parent);
    if (entry.kind === "text" || entry.kind === "reasoning") this.open.set(entry.kind + "|" + parent, entry.id);
    return entry.id;
  }

  _set(entry) { this.entries.set(entry.id, entry); return entry.id; }

  _tool(id) {
    const entry = this.entries.get(id);
    if (entry && entry.kind === "tool") return [entry, null];
    for (const group of this.entries.values()) {
      if (group.kind === "read_group" && group.reads.some((r) => r.id === id)) return [null, group];
    }
    return [null, null];
  }

  // Consecutive successful reads of one thread become one read_group (id: the first read's),
  // as adapter.chat merges them. Returns the ids changed or removed.
  _isRead(e) {
    return !!e && (e.kind === "read_group" || (e.kind === "tool" && e.status === "complete" && (e.normalized || {}).kind === "read_file"));
  }

  _thread(parent) { return [...this.entries.values()].filter((e) => (e.parent_id || "") === parent); }

  _mergeReads(entry) {
    const parent = entry.parent_id || "";
    const ids = [];
    const join = (first, second) => {
      const reads = [first, second].flatMap((e) => (e.kind === "read_group" ? e.reads : [e]));
      this.entries.delete(second.id);
      this.entries.set(first.id, { kind: "read_group", id: first.id, parent_id: first.parent_id || null, reads });
      ids.push(second.id, first.id);
      return first.id;
    };
    let id = entry.id;
    let thread = this._thread(parent);
    let i = thread.findIndex((e) => e.id === id);
    if (i > 0 && this._isRead(thread[i - 1])) id = join(thread[i - 1], entry);
    thread = this._thread(parent);
    i = thread.findIndex((e) => e.id === id);
    if (i >= 0 && i + 1 < thread.length && this._isRead(thread[i + 1])) join(thread[i], thread[i + 1]);
    return ids;
  }

  _closePermissions(pred) {
    const changed = [];
    for (const entry of this.entries.values()) {
      if (entry.kind === "permission" && entry.state === "open" && pred(entry)) {
        changed.push(this._set({ ...entry, state: "closed" }));
      }
    }
    return changed;
  }

  // Questions still open end "cancelled" (withdrawn, timed out, or their turn ended).
  _cancelQuestions(pred) {
    const changed = [];
    for (const entry of this.entries.values()) {
      if (entry.kind === "question" && entry.state === "open" && pred(entry)) {
        changed.push(this._set({ ...entry, state: "cancelled" }));
      }
    }
    return changed;
  }

  // A permission_resolved: the question gets its answers (or why it was declined), the
  // permission request its decision and who made it.
  _resolved(ev) {
    const question = this.entries.get("question:" + ev.pending_id);
    if (question && question.kind === "question") {
      const state = ev.decision === "answered" ? "answered" : "declined";
      return [this._set({ ...question, state, answers: ev.answers || null, message: ev.message || null, by: ev.by || "user" })];
    }
    const permission = this.entries.get("permission:" + ev.pending_id);
    if (permission && permission.kind === "permission") {
      return [this._set({ ...permission, state: "closed", decision: ev.decision, by: ev.by || "user" })];
    }
    return [];
  }

  // A user message as adapter.chat shows it: a prompt, a slash command, a command's output
  // (on the command just before it when that has none yet), an interruption, or nothing.
  _user(ev) {
    const parsed = parseUserText(ev.text || "");
    const id = (kind) => kind + ":" + ev.seq;
    switch (parsed.kind) {
      case "text":
        return [this._add({ kind: "user", id: id("user"), text: parsed.text, images: ev.images || 0, selections: parsed.selections })];
      case "command":
        return [this._add({ kind: "command", id: id("command"), name: parsed.name, args: parsed.args, output: null })];
      case "command_output": {
        let last = null;
        for (const e of this.entries.values()) if (!e.parent_id) last = e;
        if (last && last.kind === "command" && (last.output === null || last.output === undefined)) return [this._set({ ...last, output: parsed.text })];
        return [this._add({ kind: "command", id: id("command"), name: "", args: "", output: parsed.text })];
      }
      case "interrupt":
        return [this._add({ kind: "interrupt", id: id("interrupt"), text: "Interrupted" })];
      default:
        return ev.images ? [this._add({ kind: "user", id: id("user"), text: "", images: ev.images, selections: [] })] : [];
    }
  }

  // A turn ended at uuid: one more place to fork at (a failed turn committed nothing new,
  // its uuid is the previous turn's: no second mark), after the main thread's last entry.
  _markTurn(uuid) {
    const last = this.turns[this.turns.length - 1];
    if (!uuid || (last && last.last_message_uuid === uuid)) return;
    let after = null;
    for (const e of this.entries.values()) if (!e.parent_id) after = e.id;
    this.turns.push({ number: this.turns.length + 1, last_message_uuid: uuid, cli_session_id: this.cliSessionId, after });
  }

  // The CLI writes a failed turn's error as its assistant text too ("API Error: 529 ...", or
  // the result's text): that text, the main thread's last entry, is the error's own, and the
  // error entry (replacement) takes its place, as adapter.chat does. Returns the id dropped.
  _dropEcho(message, replacement) {
    let last = null;
    for (const e of this.entries.values()) if (!e.parent_id) last = e;
    if (!last || last.kind !== "text" || last.text !== message) return [];
    this.entries.delete(last.id);
    this.open.delete("text|");
    for (const t of this.turns) if (t.after === last.id) t.after = replacement;
    return [last.id];
  }

  // Apply one event; returns the ids of the entries it added, changed or removed ([] if none).
  apply(ev) {
    if (ev.seq && ev.seq <= this.lastSeq) return [];   // already shown
    if (ev.seq) this.lastSeq = ev.seq;
    const parent = ev.parent_tool_call_id || null;
    const key = (k) => k + "|" + (parent || "");
    switch (ev.type) {
      case "user_message":
        return this._user(ev);
      case "message_chunk":
      case "reasoning": {
        const kind = ev.type === "message_chunk" ? "text" : "reasoning";
        const openId = this.open.get(key(kind));
        const open = openId && this.entries.get(openId);
        if (open && open.message_id === ev.message_id) return [this._set({ ...open, text: open.text + ev.text })];
        // As adapter.chat names runs: "text:<message>", then "text:<message>:1", ...
        let runs = 0;
        for (const e of this.entries.values()) if (e.kind === kind && e.message_id === ev.message_id) runs++;
        const id = kind + ":" + ev.message_id + (runs ? ":" + runs : "");
        return [this._add({ kind, id, parent_id: parent, message_id: ev.message_id, text: ev.text })];
      }
      case "tool_call": {
        if (ev.normalized && ev.normalized.kind === "manage_todos" && ev.normalized.operation === "write") this.todos = ev.normalized.items || [];
        const [tool, group] = this._tool(ev.tool_call_id);
        if (tool || group) return [];
        return [this._add({ kind: "tool", id: ev.tool_call_id, parent_id: parent, tool_name: ev.tool_name, title: ev.title, normalized: ev.normalized, status: "running" })];
      }
      case "tool_progress": {
        const [tool] = this._tool(ev.tool_call_id);
        return tool && tool.status === "running" ? [this._set({ ...tool, elapsed_seconds: ev.elapsed_seconds, progress: ev.message || null })] : [];
      }
      case "tool_update": {
        const [tool, group] = this._tool(ev.tool_call_id);
        if (group) return [];   // a finished read already in a group: nothing changes
        const changed = this._closePermissions((p) => p.tool_call_id === ev.tool_call_id);
        const fields = { title: ev.title, normalized: ev.normalized, status: ev.status };
        if (tool) changed.push(this._set({ ...tool, ...fields }));
        else changed.push(this._add({ kind: "tool", id: ev.tool_call_id, parent_id: parent, tool_name: ev.tool_name, ...fields }));
        const n = ev.normalized || {};
        if (ev.status === "complete" && n.kind === "manage_todos" && n.items && n.items.length && n.operation !== "get") this.todos = n.items;
        const entry = this.entries.get(ev.tool_call_id);
        if (this._isRead(entry)) changed.push(...this._mergeReads(entry));
        return changed;
      }
      case "permission_request":
        return [this._add({ kind: "permission", id: "permission:" + ev.pending_id, parent_id: parent, pending_id: ev.pending_id, tool_name: ev.tool_name, title: ev.title, input: ev.input, normalized: ev.normalized, tool_call_id: ev.tool_call_id || null, decision_reason: ev.decision_reason || null, state: "open" })];
      case "question_request":
        return [this._add({ kind: "question", id: "question:" + ev.pending_id, parent_id: parent, pending_id: ev.pending_id, questions: ev.questions, tool_call_id: ev.tool_call_id || null, state: "open" })];
      case "permission_resolved":
        return this._resolved(ev);
      case "permission_cancelled":
        return [
          ...this._closePermissions((p) => p.pending_id === ev.pending_id),
          ...this._cancelQuestions((q) => q.pending_id === ev.pending_id),
        ];
      case "complete": {
        this.usage = { ...this.usage, cost_usd: (this.usage.cost_usd || 0) + (ev.cost_usd || 0), turns: (this.usage.turns || 0) + 1 };
        if (ev.model) this.model = ev.model;
        this._markTurn(ev.last_message_uuid);
        return [...this._closePermissions(() => true), ...this._cancelQuestions(() => true)];
      }
      case "context_window": this.context = ev; return [];
      case "session_status":
        this.model = ev.model || this.model; this.mode = ev.permission_mode || this.mode;
        this.cliSessionId = ev.cli_session_id || this.cliSessionId;
        return [];
      case "mode_changed": this.mode = ev.mode; return [];
      case "available_commands": this.commands = (ev.commands || []).map((c) => c.name); return [];
      case "error": {
        if (ev.kind === "interrupted") return [this._add({ kind: "interrupt", id: "interrupt:" + ev.seq, text: ev.message })];
        const id = "error:" + ev.seq;
        const dropped = this._dropEcho(ev.message || "", id);
        const entry = { kind: "error", id, message: ev.message, error_kind: ev.kind };
        if (ev.status !== null && ev.status !== undefined) entry.status = ev.status;
        if (ev.request_id) entry.request_id = ev.request_id;
        return [...dropped, this._add(entry)];
      }
      case "compact_boundary":
        return [this._add({ kind: "notice", id: "notice:" + ev.seq, text: "Conversation compacted" })];
      case "api_retry":
        return [this._add({ kind: "notice", id: "notice:" + ev.seq, text: "Retrying the API call (attempt " + ev.attempt + ")" + (ev.error ? ": " + ev.error : "") })];
      case "task": {
        const tool = ev.tool_call_id && this.entries.get(ev.tool_call_id);
        return tool && tool.kind === "tool" ? [this._set({ ...tool, task_status: ev.status || ev.phase })] : [];
      }
      case "rate_limit":
        return [this._add({ kind: "notice", id: "notice:" + ev.seq, text: "Rate limit: " + ev.status })];
      default:
        return [];
    }
  }
}
