// What needs a person's decision, and what was decided: permission cards (folded into their
// tool card once settled) and the agent's questions (AskUserQuestion) as a form.
import { el } from "./dom.js";
import { toolBody } from "./tools.js";

const DECISIONS = { allow: "Allowed", allow_always: "Always allowed", deny: "Denied", answered: "Answered", declined: "Declined" };

// "Allowed by you", "Denied by the policy", ... ("" when nothing was decided).
export function decisionText(decision, by) {
  if (!decision) return "";
  return (DECISIONS[decision] || decision) + (by === "policy" ? " by the policy" : " by you");
}

export function permissionCard(e, ctx) {
  const open = e.state === "open" && ctx.pending(e.pending_id);
  if (!open && e.tool_call_id && ctx.hasTool(e.tool_call_id)) {
    // Settled: its tool card says what was decided.
    return el("div", { class: "folded", "data-id": e.id, "data-pending": e.pending_id, hidden: true });
  }
  const title = (e.tool_name || "") + (e.title ? ": " + e.title : "");
  const card = el("div", { class: "card permission" + (open ? "" : " closed"), "data-id": e.id, "data-pending": e.pending_id, "data-state": open ? "open" : "settled" });
  if (!open) {
    card.append(el("div", { class: "head" },
      el("span", { class: "status decision " + (e.decision || "closed"), text: decisionText(e.decision, e.by) || "Not needed any more" }),
      el("span", { class: "title", text: title })));
    return card;
  }
  card.setAttribute("role", "group");
  card.setAttribute("aria-label", "Approval needed: " + title);
  card.append(el("div", { class: "head" },
    el("span", { class: "status waiting", text: "waiting for your approval" }),
    el("span", { class: "title", text: title })));
  if (e.decision_reason) card.append(el("div", { class: "note", text: e.decision_reason }));
  const preview = toolBody(e.normalized);
  if (preview.childNodes.length) card.append(preview);
  const input = el("textarea", { name: "input", rows: "4", "aria-label": "Tool input (editable JSON)" });
  input.value = JSON.stringify(e.input || {}, null, 2);
  const edit = el("details", { class: "edit-input" }, el("summary", { text: "Edit the input" }), input);
  const message = el("input", { name: "message", placeholder: "Why not? (optional, Claude reads it)", "aria-label": "Reason when denying" });
  const status = el("div", { class: "note error", role: "alert" });
  const answer = (decision) => {
    let updated;
    if (decision !== "deny" && edit.open) {
      try { updated = JSON.parse(input.value); } catch (err) { status.textContent = "The input is not valid JSON: " + err.message; return; }
    }
    ctx.actions.answer(e.pending_id, decision, updated, message.value).catch((err) => { status.textContent = String(err.message || err); });
  };
  card.append(edit, message, el("div", { class: "actions" },
    el("button", { type: "button", class: "allow", onclick: () => answer("allow"), text: "Allow" }),
    el("button", { type: "button", class: "always", onclick: () => answer("allow_always"), text: "Always allow" }),
    el("button", { type: "button", class: "deny", onclick: () => answer("deny"), text: "Deny" })), status);
  return card;
}

let formCount = 0;

// One question as a fieldset: radio buttons (single choice) or checkboxes (multi-select),
// and "Other" with a free-text field. Returns [fieldset, () => chosen labels].
function questionField(q) {
  const name = "q" + ++formCount;
  const type = q.multi_select ? "checkbox" : "radio";
  const box = el("fieldset", { class: "question" },
    el("legend", {}, q.header ? el("span", { class: "qhead", text: q.header }) : null, el("span", { text: q.question })));
  const choices = [];
  for (const option of q.options || []) {
    const input = el("input", { type, name, value: option.label });
    choices.push(input);
    box.append(el("label", { class: "option" }, input,
      el("span", { class: "label", text: option.label }),
      option.description ? el("span", { class: "desc", text: option.description }) : null));
  }
  const other = el("input", { type, name, value: "", "aria-label": "Other" });
  const otherText = el("input", { type: "text", class: "other-text", placeholder: "Other…", "aria-label": "Other answer for: " + q.question });
  otherText.addEventListener("input", () => { other.checked = otherText.value.trim() !== ""; });
  box.append(el("label", { class: "option other" }, other, el("span", { class: "label", text: "Other" }), otherText));
  const chosen = () => {
    const labels = choices.filter((c) => c.checked).map((c) => c.value);
    if (other.checked && otherText.value.trim()) labels.push(otherText.value.trim());
    return labels;
  };
  return [box, chosen];
}

export function questionCard(e, ctx) {
  const open = e.state === "open" && ctx.pending(e.pending_id);
  const card = el("div", { class: "card question" + (open ? "" : " closed"), "data-id": e.id, "data-pending": e.pending_id, "data-state": open ? "open" : "settled" });
  if (!open) {
    const head = e.state === "answered" ? decisionText("answered", e.by)
      : e.state === "declined" ? decisionText("declined", e.by) : "Not asked any more";
    card.append(el("div", { class: "head" }, el("span", { class: "status decision " + e.state, text: head })));
    for (const q of e.questions || []) {
      const answer = e.answers && e.answers[q.question];
      card.append(el("div", { class: "qa" }, el("span", { class: "q", text: q.question }),
        answer ? el("span", { class: "a", text: answer.join(", ") }) : null));
    }
    if (e.message) card.append(el("div", { class: "note", text: e.message }));
    return card;
  }
  const form = el("form", { class: "question-form", "aria-label": "Claude asks" });
  form.append(el("div", { class: "head" }, el("span", { class: "status waiting", text: "Claude asks you" })));
  const fields = (e.questions || []).map((q) => { const [box, chosen] = questionField(q); form.append(box); return [q, chosen]; });
  const reason = el("input", { name: "message", placeholder: "Why not? (optional, when declining)", "aria-label": "Reason when declining" });
  const status = el("div", { class: "note error", role: "alert" });
  form.append(el("div", { class: "actions" },
    el("button", { type: "submit", class: "allow", text: "Answer" }),
    el("button", { type: "button", class: "deny", text: "Decline", onclick: () => {
      ctx.actions.declineQuestion(e.pending_id, reason.value).catch((err) => { status.textContent = String(err.message || err); });
    } })), reason, status);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const answers = {};
    for (const [q, chosen] of fields) {
      const labels = chosen();
      if (!labels.length) { status.textContent = "Choose an answer for: " + q.question; return; }
      answers[q.question] = labels;
    }
    ctx.actions.answerQuestion(e.pending_id, answers).catch((err) => { status.textContent = String(err.message || err); });
  });
  card.append(form);
  return card;
}
