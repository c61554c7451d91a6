// The body of a tool card, by the normalized payload's kind (normalize/ on the server).
import { el, pre, put } from "./dom.js";

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
      put(body, el("div", { text: (n.method || "GET") + " " + (n.url || n.query || "") + (n.status_code ? " (HTTP " + n.status_code + ")" : "") }));
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
