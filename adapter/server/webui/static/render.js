// DOM for chat entries. Text from tools and files only ever goes through textContent (never
// innerHTML); the model's text is Markdown, rendered and sanitised by markdown.js.
import { el } from "./dom.js";
import { decisionText, permissionCard, questionCard } from "./decisions.js";
import { errorNote } from "./failure.js";
import { renderMarkdown } from "./markdown.js";
import { toolBody } from "./tools.js";

export { el };

function collapsible(card, head, body, open) {
  body.hidden = !open;
  head.setAttribute("aria-expanded", String(open));
  const toggle = () => { body.hidden = !body.hidden; head.setAttribute("aria-expanded", String(!body.hidden)); };
  head.addEventListener("click", toggle);
  head.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); }
  });
  card.append(head, body);
  return card;
}

// A tool's status as a person reads it: waiting for approval, denied (the person's decision,
// not an error), interrupted, or the tool's own.
function toolStatus(e, permission, ctx) {
  if (permission && permission.state === "open" && ctx.pending(permission.pending_id)) return ["waiting", "waiting for approval"];
  if (permission && permission.decision === "deny") return ["denied", "denied"];
  const n = e.normalized || {};
  const interrupted = (n.output && n.output.interrupted) || /interrupted by user/i.test(n.error || "");
  if (e.status === "error" && interrupted) return ["denied", "interrupted"];
  return [e.status, e.status];
}

function toolCard(e, ctx) {
  if (ctx.questionFor(e.id)) {
    // AskUserQuestion: its question card shows it.
    return el("div", { class: "folded", "data-id": e.id, hidden: true }, el("div", { class: "children" }));
  }
  const permission = ctx.permissionFor(e.id);
  const [cls, label] = toolStatus(e, permission, ctx);
  const card = el("div", { class: "card tool kind-" + ((e.normalized && e.normalized.kind) || "other"), "data-id": e.id });
  const decided = permission && permission.decision ? decisionText(permission.decision, permission.by) : "";
  const head = el("div", { class: "head", role: "button", tabindex: "0" },
    el("span", { class: "status " + cls, text: label }),
    el("span", { class: "title", text: e.title || e.tool_name || "tool" }),
    decided ? el("span", { class: "decision " + permission.decision, text: decided }) : null,
    e.elapsed_seconds ? el("span", { class: "exit", text: Math.round(e.elapsed_seconds) + " s" }) : null);
  const kind = e.normalized && e.normalized.kind;
  // A denial's error is the CLI's wording for the person's decision: the head says it.
  const normalized = cls === "denied" && e.normalized ? { ...e.normalized, error: undefined } : e.normalized;
  const open = kind === "modify_file" || kind === "shell_exec" || kind === "manage_todos" || (e.status === "error" && cls !== "denied");
  collapsible(card, head, toolBody(normalized), open);
  card.append(el("div", { class: "children" }));
  return card;
}

// ctx: { actions, pending(pending_id), hasTool(id), permissionFor(tool id), questionFor(tool id),
//   thumbnails(entry id, count): the images a prompt carried }
export function renderEntry(e, ctx) {
  switch (e.kind) {
    case "user": {
      const box = el("div", { class: "msg user", "data-id": e.id, text: e.text || "" });
      if (e.images) {
        box.append(ctx.thumbnails ? ctx.thumbnails(e.id, e.images)
          : el("span", { class: "sel", text: e.images === 1 ? "1 image attached" : e.images + " images attached" }));
      }
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
      return toolCard(e, ctx);
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
      return permissionCard(e, ctx);
    case "question":
      return questionCard(e, ctx);
    case "interrupt":
      return el("div", { class: "note decision", "data-id": e.id, text: "Interrupted by you" });
    case "error":
      return errorNote(e);
    default:
      return el("div", { class: "note", "data-id": e.id, text: e.text || e.message || e.kind });
  }
}
