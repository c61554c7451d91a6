// What a person sees of a user message: the CLI wraps some prompts in tags. A port of
// adapter/history/usertext.py (parse_user_text), so live events render as a snapshot does:
// slash commands (<command-name>, <command-args>) and their output (<local-command-stdout>,
// <local-command-stderr>), interruptions, IDE selections (<ide_selection>, <ide_opened_file>)
// and <system-reminder> blocks. Python's whitespace and \w are spelled out where JavaScript's
// differ. Pure; never throws.

const WS = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const LEADING = new RegExp("^[" + WS + "]+");
const TRAILING = new RegExp("[" + WS + "]+$");
const REMINDER = /<system-reminder>[\s\S]*?<\/system-reminder>/g;
const IDE = /<(ide_selection|ide_opened_file)>([\s\S]*?)<\/\1>/g;
const NAME = /<command-name>([\s\S]*?)<\/command-name>/;
const ARGS = /<command-args>([\s\S]*?)<\/command-args>/;
const STDOUT = /<local-command-(?:stdout|stderr)>([\s\S]*?)<\/local-command-(?:stdout|stderr)>/g;
const TYPED = /^\/([A-Za-z][\p{L}\p{N}_:.-]*)(?:[ \t]+([\s\S]*))?$/u;
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;
const INTERRUPTS = ["[Request interrupted by user]", "[Request interrupted by user for tool use]"];

// str.strip() as Python does it.
export function strip(text) {
  return text.replace(LEADING, "").replace(TRAILING, "");
}

// { kind: "text" | "command" | "command_output" | "interrupt" | "hidden", text, name, args,
//   selections } as adapter.chat.UserText.
export function parseUserText(text) {
  let body = text.replace(REMINDER, "");
  const selections = [...body.matchAll(IDE)].map((m) => strip(m[2]));
  body = strip(body.replace(IDE, ""));
  if (INTERRUPTS.includes(body)) return { kind: "interrupt", text: body, selections: [] };
  const outputs = [...body.matchAll(STDOUT)].map((m) => m[1]);
  const name = NAME.exec(body);
  if (name) {
    const args = ARGS.exec(body);
    return { kind: "command", name: strip(name[1]).replace(/^\/+/, ""), args: args ? strip(args[1]) : "", selections: [] };
  }
  if (outputs.length) return { kind: "command_output", text: strip(outputs.join("\n").replace(ANSI, "")), selections: [] };
  if (!body) return { kind: "hidden", selections };
  const typed = TYPED.exec(body);
  if (typed) return { kind: "command", name: typed[1], args: strip(typed[2] || ""), selections: [] };
  return { kind: "text", text: body, selections };
}
