// The model's Markdown as DOM: marked (GFM) turns it into HTML, DOMPurify keeps only inert
// markup. Defence in depth, as model text is untrusted: raw HTML in the Markdown is shown as
// text (never parsed), images become links (nothing is fetched from elsewhere; the page's CSP
// would refuse it anyway), links keep only http(s)/mailto addresses and open in a new tab,
// and DOMPurify removes what a bug in either step might let through (scripts, handlers,
// javascript: URLs, forms, styles).
import { Marked } from "./marked.js";
import DOMPurify from "./purify.js";

const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

const md = new Marked({ gfm: true, breaks: false, async: false });
md.use({
  renderer: {
    html({ text }) { return escapeHtml(text); },
    image({ href, text }) {
      return '<a href="' + escapeHtml(href || "") + '">' + escapeHtml("image: " + (text || href || "")) + "</a>";
    },
  },
});

const purifier = DOMPurify(window);
purifier.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href") || "";
    if (!/^(https?:|mailto:)/i.test(href)) node.removeAttribute("href");
    else { node.setAttribute("target", "_blank"); node.setAttribute("rel", "noopener noreferrer"); }
  }
});
const CONFIG = {
  RETURN_DOM_FRAGMENT: true,
  ALLOWED_TAGS: ["p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td", "input", "span"],
  ALLOWED_ATTR: ["href", "title", "class", "align", "start", "type", "checked", "disabled", "target", "rel"],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
};

// A copy button on each code block (the clipboard API where the page is a secure context,
// else a selection the person copies).
function copyButtons(root) {
  for (const pre of root.querySelectorAll("pre")) {
    const code = pre.textContent;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy the code");
    button.addEventListener("click", () => {
      const done = () => { button.textContent = "Copied"; setTimeout(() => { button.textContent = "Copy"; }, 1500); };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(code).then(done, () => {});
      else { const range = document.createRange(); range.selectNodeContents(pre); getSelection().removeAllRanges(); getSelection().addRange(range); }
    });
    // A long line scrolls the block sideways: keyboard users reach it too.
    pre.tabIndex = 0;
    const box = document.createElement("div");
    box.className = "codeblock";
    pre.replaceWith(box);
    box.append(button, pre);
  }
}

// The DOM of a Markdown text (a fragment); never throws (plain text if parsing fails).
export function renderMarkdown(text) {
  let fragment;
  try {
    fragment = purifier.sanitize(md.parse(text || ""), CONFIG);
  } catch {
    fragment = document.createDocumentFragment();
    fragment.append(document.createTextNode(text || ""));
  }
  // GFM task-list checkboxes are display only.
  for (const box of fragment.querySelectorAll("input")) {
    if (box.type !== "checkbox") box.remove(); else box.disabled = true;
  }
  copyButtons(fragment);
  return fragment;
}
