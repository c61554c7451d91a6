// DOM helpers for the page: elements from attributes (text only ever via textContent, so a
// tool output or a file name cannot inject markup), and folded long outputs.

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
export function put(node, ...kids) { for (const kid of kids) if (kid) node.append(kid); }

// Long outputs show their first lines and a "Show all" button.
const FOLD_LINES = 30;

export function pre(text, cls) {
  if (!text) return null;
  const all = text.split("\n");
  if (all.length <= FOLD_LINES + 5) return el("pre", { class: cls, text });
  const box = el("pre", { class: (cls || "") + " folded", text: all.slice(0, FOLD_LINES).join("\n") });
  const more = el("button", { type: "button", class: "show-all", text: "Show all " + all.length + " lines" });
  more.addEventListener("click", () => { box.textContent = text; box.classList.remove("folded"); more.remove(); });
  const wrap = el("div", { class: "fold" }, box, more);
  return wrap;
}
