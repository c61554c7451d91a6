// The composer's extras: images pasted, dropped or picked (sent as the protocol's images,
// shown as thumbnails), and a picker for the slash commands the CLI offers.
import { el } from "./dom.js";

const TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const MAX_BYTES = 5 * 1024 * 1024;   // the server takes frames up to 8 MB; base64 adds a third

function readImage(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

export class Composer {
  constructor({ prompt, list, attachments, attach, input, commands, error }) {
    Object.assign(this, { prompt, list, box: attachments, commands, error });
    this.files = [];          // { media_type, data (base64), url (data: URL), name }
    this.matches = [];
    this.active = -1;
    attach.addEventListener("click", () => input.click());
    input.addEventListener("change", () => { this.add([...input.files]); input.value = ""; });
    prompt.addEventListener("paste", (ev) => {
      const files = [...(ev.clipboardData ? ev.clipboardData.files : [])].filter((f) => f.type.startsWith("image/"));
      if (files.length) { ev.preventDefault(); this.add(files); }
    });
    const form = prompt.form;
    form.addEventListener("dragover", (ev) => { if (ev.dataTransfer && [...ev.dataTransfer.types].includes("Files")) { ev.preventDefault(); form.classList.add("dropping"); } });
    form.addEventListener("dragleave", () => form.classList.remove("dropping"));
    form.addEventListener("drop", (ev) => {
      form.classList.remove("dropping");
      if (!ev.dataTransfer || !ev.dataTransfer.files.length) return;
      ev.preventDefault();
      this.add([...ev.dataTransfer.files]);
    });
    prompt.addEventListener("input", () => this.filter());
    // Closed on leaving the field (later, so a click on an option lands first); not when
    // the field has the focus again by then.
    prompt.addEventListener("blur", () => setTimeout(() => { if (document.activeElement !== prompt) this.close(); }, 150));
  }

  // -- images ----------------------------------------------------------------------

  async add(files) {
    for (const file of files) {
      if (!TYPES.includes(file.type)) { this.error(file.name + ": only PNG, JPEG, GIF and WebP images can be sent"); continue; }
      if (file.size > MAX_BYTES) { this.error(file.name + ": images up to 5 MB can be sent"); continue; }
      const url = await readImage(file);
      this.files.push({ media_type: file.type, data: url.slice(url.indexOf(",") + 1), url, name: file.name || "image" });
    }
    this.draw();
  }

  draw() {
    this.box.replaceChildren();
    this.files.forEach((f, i) => {
      this.box.append(el("figure", { class: "thumb" },
        el("img", { src: f.url, alt: f.name }),
        el("button", { type: "button", class: "small", text: "Remove", "aria-label": "Remove " + f.name,
          onclick: () => { this.files.splice(i, 1); this.draw(); this.prompt.focus(); } })));
    });
    this.box.hidden = this.files.length === 0;
  }

  images() { return this.files.map(({ media_type, data }) => ({ media_type, data })); }

  clear() { this.files = []; this.draw(); this.close(); }

  // -- slash commands ----------------------------------------------------------------

  filter() {
    const m = /^\/([^\s]*)$/.exec(this.prompt.value);
    const names = m ? (this.commands() || []) : [];
    const q = m ? m[1].toLowerCase() : "";
    this.matches = names.filter((n) => n.toLowerCase().includes(q))
      .sort((a, b) => a.toLowerCase().startsWith(q) === b.toLowerCase().startsWith(q) ? a.localeCompare(b) : a.toLowerCase().startsWith(q) ? -1 : 1)
      .slice(0, 12);
    this.active = this.matches.length ? 0 : -1;
    this.drawList();
  }

  drawList() {
    this.list.replaceChildren();
    this.matches.forEach((name, i) => {
      const option = el("li", { role: "option", id: "slash-" + i, "aria-selected": String(i === this.active), text: "/" + name });
      option.addEventListener("mousedown", (ev) => { ev.preventDefault(); this.pick(i); });
      this.list.append(option);
    });
    const open = this.matches.length > 0;
    this.list.hidden = !open;
    this.prompt.setAttribute("aria-expanded", String(open));
    if (open) this.prompt.setAttribute("aria-activedescendant", "slash-" + this.active);
    else this.prompt.removeAttribute("aria-activedescendant");
  }

  pick(i) {
    this.prompt.value = "/" + this.matches[i] + " ";
    this.close();
    this.prompt.focus();
  }

  close() { this.matches = []; this.active = -1; this.drawList(); }

  // Arrow keys, Enter / Tab and Escape while the picker is open; true when the key was its.
  pickerKey(ev) {
    if (!this.matches.length) return false;
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      const n = this.matches.length;
      this.active = (this.active + (ev.key === "ArrowDown" ? 1 : n - 1)) % n;
      this.drawList();
      return true;
    }
    if ((ev.key === "Enter" && !ev.shiftKey) || ev.key === "Tab") { ev.preventDefault(); this.pick(this.active); return true; }
    if (ev.key === "Escape") { ev.preventDefault(); ev.stopPropagation(); this.close(); return true; }
    return false;
  }
}
