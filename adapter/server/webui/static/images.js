// The images a person sent, shown as thumbnails under their prompt. The server keeps them
// (get_image over the WebSocket protocol, behind the same owner check as the session); only
// the image types it takes ever become a data: URL, and a click shows one larger.
import { el } from "./dom.js";

const TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

// A data: URL for an image frame, or null when it is not one of the types drawn.
export function imageUrl(frame) {
  if (!frame || !TYPES.has(frame.media_type) || typeof frame.data !== "string" || !BASE64.test(frame.data)) return null;
  return "data:" + frame.media_type + ";base64," + frame.data;
}

// fetch(session, entry, index) -> Promise of a data: URL or null; cached per image.
export function imageCache(request) {
  const cache = new Map();
  return (sid, entry, index) => {
    const key = sid + "\n" + entry + "\n" + index;
    if (!cache.has(key)) {
      const got = request({ type: "get_image", session_id: sid, entry_id: entry, index }).then(imageUrl, () => null);
      got.then((url) => { if (!url) cache.delete(key); });   // asked again later (a reconnect)
      cache.set(key, got);
    }
    return cache.get(key);
  };
}

let viewer = null;

function showLarge(url, alt, from) {
  if (!viewer) {
    const img = el("img", { alt: "" });
    const close = el("button", { type: "button", class: "small", text: "Close" });
    viewer = el("dialog", { id: "image-viewer", "aria-label": "Image" }, img, close);
    close.addEventListener("click", () => viewer.close());
    viewer.addEventListener("click", (ev) => { if (ev.target === viewer) viewer.close(); });
    document.body.append(viewer);
  }
  const img = viewer.querySelector("img");
  img.src = url; img.alt = alt;
  viewer.onclose = () => { if (from && from.isConnected) from.focus(); };
  viewer.showModal();
}

// The thumbnails of a prompt's `count` images: a button each, filled in once fetched.
export function thumbnails(sid, entry, count, fetchImage) {
  const box = el("div", { class: "thumbs" });
  for (let i = 0; i < count; i++) {
    const alt = count === 1 ? "Image you sent" : "Image " + (i + 1) + " of " + count + " you sent";
    const img = el("img", { alt, width: "96", height: "96" });
    const button = el("button", { type: "button", class: "thumb-view", "aria-label": "Show " + alt.toLowerCase() + " larger", disabled: true }, img);
    box.append(button);
    fetchImage(sid, entry, i).then((url) => {
      if (!url) {
        button.replaceWith(el("span", { class: "sel", text: alt + " (not kept on the server)" }));
        return;
      }
      img.src = url;
      button.disabled = false;
      button.addEventListener("click", () => showLarge(url, alt, button));
    });
  }
  return box;
}
