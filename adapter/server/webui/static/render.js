// DOM for chat entries. Text from tools and files only ever goes through textContent (never
// innerHTML), so a tool output or a file name cannot inject markup; the model's text is
// Markdown, rendered and sanitised by markdown.js.
import { renderMarkdown } from "./markdown.js";

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

// Append only the nodes that exist (DOM append would write "null" for a missing one).
function put(node, ...kids) { for (const kid of kids) if (kid) node.append(kid); }

// Long outputs show their first lines and a "Show all" button.
const FOLD_LINES = 30;

function pre(text, cls) {
  if (!text) return null;
  const all = text.split("\n");
  if (all.length <= FOLD_LINES + 5) return el("pre", { class: cls, text });
  const box = el("pre", { class: (cls || "") + " folded", text: all.slice(0, FOLD_LINES).join("\n") });
  const more = el("button", { type: "button", class: "show-all", text: "Show all " + all.length + " lines" });
  more.addEventListener("click", () => { box.textContent = text; box.classList.remove("folded"); more.remove(); });
  const wrap = el("div", { class: "fold" }, box, more);
  return wrap;
}

function diffView(diff) {
  const box = el("div", { class: "diff" });
  for (const line of diff.split("\n")) {
    const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+++") || line.startsWith("---") ? "hunk"
      : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
    box.append(el("span", { class: cls, text: line || " " }));
  }
  return box;
}

function lines(text, sign) {
  return (text || "").split("\n").map((l) => sign + l).join("\n");
}

// The body of a tool card, by the normalized payload's kind.
export function toolBody(n) {
  const body = el("div", { class: "body" });
  if (!n) return body;
  switch (n.kind) {
    case "shell_exec": {
      put(body, pre("$ " + (n.command || ""), "cmd"));
      const out = n.output;
      if (out) {
        put(body, pre(out.stdout, "stdout"), pre(out.stderr, "stderr"));
        if (out.exit_code !== undefined && out.exit_code !== null) put(body, el("span", { class: "exit", text: "exit code " + out.exit_code }));
        if (out.interrupted) put(body, el("span", { class: "exit", text: " (interrupted)" }));
      }
      break;
    }
    case "modify_file":
      put(body, el("div", { class: "path", text: n.file_path || "" }));
      for (const m of n.mutations || []) {
        if (m.diff) put(body, diffView(m.diff));
        else if (m.old_content !== undefined || m.new_content !== undefined) put(body, diffView(lines(m.old_content, "-") + "\n" + lines(m.new_content, "+")));
        else if (m.content) put(body, diffView(lines(m.content, "+")));
      }
      break;
    case "read_file":
      put(body, el("div", { class: "path", text: n.file_path || "" }));
      if (n.output && n.output.content) put(body, pre(n.output.content));
      break;
    case "code_search": {
      const out = n.output || {};
      put(body, el("div", { text: (n.pattern || n.query || "") + (n.path ? " in " + n.path : "") }));
      const found = (out.files || []).concat((out.matches || []).map((m) => (m.path || "") + (m.line ? ":" + m.line : "") + (m.text ? "  " + m.text : "")));
      if (found.length) put(body, pre(found.join("\n")));
      break;
    }
    case "http_request":
      put(body, el("div", { text: (n.method || "GET") + " " + (n.url || n.query || "") + (n.status_code ? " → " + n.status_code : "") }));
      if (n.response) put(body, pre(n.response));
      break;
    case "manage_todos": {
      const list = el("ul", { class: "todos" });
      for (const t of n.items || []) list.append(el("li", { class: t.status || "", text: t.description || t.id || "" }));
      put(body, list);
      break;
    }
    case "subagent_task":
      put(body, el("div", { text: n.description || "" }));
      if (n.result && n.result.output) put(body, pre(n.result.output));
      break;
    case "show_plan":
      put(body, pre(n.plan));
      break;
    default:
      if (n.input !== undefined) put(body, pre(JSON.stringify(n.input, null, 2)));
      if (n.output) put(body, pre(typeof n.output === "string" ? n.output : JSON.stringify(n.output, null, 2)));
  }
  if (n.error) put(body, el("div", { class: "note error", text: n.error }));
  return body;
}

function collapsible(card, head, body, open) {
  body.hidden = !open;
  head.addEventListener("click", () => { body.hidden = !body.hidden; });
  head.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); body.hidden = !body.hidden; }
  });
  card.append(head, body);
  return card;
}

function toolCard(e) {
  const card = el("div", { class: "card tool kind-" + ((e.normalized && e.normalized.kind) || "other"), "data-id": e.id });
  const head = el("div", { class: "head", role: "button", tabindex: "0" },
    el("span", { class: "status " + e.status, text: e.status }),
    el("span", { class: "title", text: e.title || e.tool_name || "tool" }),
    e.elapsed_seconds ? el("span", { class: "exit", text: Math.round(e.elapsed_seconds) + " s" }) : null);
  const kind = e.normalized && e.normalized.kind;
  const open = kind === "modify_file" || kind === "shell_exec" || kind === "manage_todos" || e.status === "error";
  collapsible(card, head, toolBody(e.normalized), open);
  card.append(el("div", { class: "children" }));
  return card;
}

export function renderEntry(e, actions, pending) {
  switch (e.kind) {
    case "user": {
      const box = el("div", { class: "msg user", "data-id": e.id, text: e.text || (e.images ? "[" + e.images + " image(s)]" : "") });
      for (const s of e.selections || []) box.append(el("span", { class: "sel", text: "selection: " + s }));
      return box;
    }
    case "command":
      return el("div", { class: "msg user command", "data-id": e.id, text: [e.name ? "/" + e.name + (e.args ? " " + e.args : "") : "", e.output || ""].filter(Boolean).join("\n") });
    case "text":
      return el("div", { class: "msg assistant markdown", "data-id": e.id }, renderMarkdown(e.text));
    case "reasoning":
      return el("details", { class: "reasoning", "data-id": e.id }, el("summary", { text: "Thinking" }), el("div", { text: e.text }));
    case "tool":
      return toolCard(e);
    case "read_group": {
      const card = el("div", { class: "card tool kind-read_group", "data-id": e.id });
      const head = el("div", { class: "head", role: "button", tabindex: "0" },
        el("span", { class: "status complete", text: "read" }),
        el("span", { class: "title", text: "Read " + e.reads.length + " files" }));
      const body = el("ul", { class: "body" });
      for (const r of e.reads) body.append(el("li", { text: r.title || (r.normalized && r.normalized.file_path) || r.id }));
      collapsible(card, head, body, false);
      card.append(el("div", { class: "children" }));
      return card;
    }
    case "permission":
      return permissionCard(e, actions, pending);
    case "interrupt":
      return el("div", { class: "note", "data-id": e.id, text: "⏹ " + (e.text || "Interrupted") });
    case "error":
      return el("div", { class: "note error", "data-id": e.id, text: "Error: " + e.message });
    default:
      return el("div", { class: "note", "data-id": e.id, text: e.text || e.message || e.kind });
  }
}

function permissionCard(e, actions, pending) {
  const open = e.state === "open" && pending(e.pending_id);
  const card = el("div", { class: "card permission" + (open ? "" : " closed"), "data-id": e.id, "data-pending": e.pending_id });
  card.append(el("div", { class: "head" },
    el("span", { class: "status running", text: open ? "needs you" : "answered" }),
    el("span", { class: "title", text: (e.tool_name || "") + ": " + (e.title || "") })));
  if (e.decision_reason) card.append(el("div", { class: "note", text: e.decision_reason }));
  if (!open) return card;
  const input = el("textarea", { name: "input", rows: "4", "aria-label": "Tool input (editable JSON)" });
  input.value = JSON.stringify(e.input || {}, null, 2);
  const message = el("input", { name: "message", placeholder: "Message for Claude when denying (optional)", "aria-label": "Deny message" });
  const status = el("div", { class: "note error" });
  const answer = (decision) => {
    let updated;
    if (decision !== "deny") {
      try { updated = JSON.parse(input.value); } catch (err) { status.textContent = "The input is not valid JSON: " + err.message; return; }
    }
    actions.answer(e.pending_id, decision, updated, message.value).catch((err) => { status.textContent = String(err.message || err); });
  };
  card.append(input, message, el("div", { class: "actions" },
    el("button", { type: "button", class: "allow", onclick: () => answer("allow"), text: "Allow" }),
    el("button", { type: "button", class: "always", onclick: () => answer("allow_always"), text: "Always allow" }),
    el("button", { type: "button", class: "deny", onclick: () => answer("deny"), text: "Deny" })), status);
  return card;
}
