// The colour theme: automatic (the system's preference), light or dark; kept per browser.
const $ = (id) => document.getElementById(id);

const THEMES = ["auto", "light", "dark"];
function setTheme(theme) {
  if (theme === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  $("theme").textContent = "Theme: " + theme;
  try { localStorage.setItem("ccb-theme", theme); } catch { /* storage refused: not kept */ }
}
$("theme").addEventListener("click", () => {
  const now = document.documentElement.dataset.theme || "auto";
  setTheme(THEMES[(THEMES.indexOf(now) + 1) % THEMES.length]);
});
try { setTheme(THEMES.includes(localStorage.getItem("ccb-theme")) ? localStorage.getItem("ccb-theme") : "auto"); } catch { setTheme("auto"); }
