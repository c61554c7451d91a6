// The named agents a session can start from (serve --agents): the server lists them, names and
// descriptions, in its answer to "hello"; the landing form offers them in a select, with the
// chosen one's description beside it. Shown only when there is a choice: a server without an
// agents file offers just "default", its own settings, which starting without a name gives.
// Names and descriptions come from the agents file: set as text only (el / textContent).
import { el } from "./dom.js";

const NONE = "(server settings)";

export function agentPicker({ field, select, about }) {
  let agents = [];

  function describe() {
    const chosen = agents.find((a) => a.name === select.value);
    about.textContent = chosen ? chosen.description : "The server's own directory, model and policy.";
  }

  function show(list) {
    agents = Array.isArray(list) ? list.filter((a) => a && typeof a.name === "string") : [];
    const before = select.value;
    select.replaceChildren(
      el("option", { value: "", text: NONE }),
      ...agents.map((a) => el("option", { value: a.name, text: a.name })),
    );
    // A reconnect keeps what was picked, if the server still offers it.
    select.value = agents.some((a) => a.name === before) ? before : "";
    field.hidden = !agents.some((a) => a.name !== "default");
    describe();
  }

  select.addEventListener("change", describe);
  return { show };
}
