// Drives an ACP agent with the official TypeScript SDK's client (@agentclientprotocol/sdk),
// following a JSON script, and prints what happened as JSON on stdout.
//
//   node drive.mjs script.json
//
// script.json: {
//   "agent": ["cmd", "arg", ...], "env": {...}, "cwd": "...",
//   "wire": "/path/prefix"           // raw bytes each way: <prefix>.agent.ndjson / .client.ndjson
//   "steps": [
//     {"op": "initialize", "elicitation": true},   // advertise form elicitation
//     {"op": "new", "name": "a", "cwd": "/abs"},
//     {"op": "load", "name": "b", "sessionId": "<uuid>" | "from": "a", "cwd": "/abs"},
//     {"op": "resume", ...as load},  {"op": "close", "session": "a"},
//     {"op": "delete", "session": "a"}   // "new" and "resume" take "additionalDirectories"
//     {"op": "fork", "name": "b", "from": "a", "cwd": "/abs"}   (unstable)
//     {"op": "prompt", "session": "a", "prompt": "text" | [blocks],
//      "permissions": ["allow_once", "reject_once", "cancel", ...],   // answers, in order
//      "elicitations": [{"action": "accept", "content": {...}}, ...],  // answers, in order
//      "cancelOn": "first_chunk" | "tool_call" | "in_progress"},                       // send session/cancel then
//     {"op": "list", "cwd": "/abs"},
//     {"op": "set_mode", "session": "a", "modeId": "plan"},
//     {"op": "set_model", "session": "a", "value": "haiku"},
//     {"op": "set_config", "session": "a", "configId": "effort", "value": "low"},
//     {"op": "parallel", "steps": [...]},
//     {"op": "wait_file", "path": "/abs"},   // until the test creates that file
//     a "prompt" with "retryUnavailable": true is sent again while it fails with
//     error.data.reason "unavailable" (the agent's backend is out of reach)
//     {"op": "end"}                    // close the agent's stdin, wait for it to exit
//   ]
// }
// Output: {"results": [...one per step...], "updates": {name: [update...]},
//          "permissions": {name: [request params...]}, "elicitations": {name: [params...]},
//          "exit": code, "stderr": "..."}
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import * as acp from "@agentclientprotocol/sdk";

const script = JSON.parse(readFileSync(process.argv[2], "utf8"));
const child = spawn(script.agent[0], script.agent.slice(1), {
  env: script.env,
  cwd: script.cwd,
  stdio: ["pipe", "pipe", "pipe"],
});
let stderr = "";
child.stderr.on("data", (d) => {
  stderr += d.toString();
});
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));

const wireAgent = script.wire + ".agent.ndjson";
const wireClient = script.wire + ".client.ndjson";
writeFileSync(wireAgent, "");
writeFileSync(wireClient, "");

const input = new ReadableStream({
  start(controller) {
    let open = true;
    child.stdout.on("data", (d) => {
      appendFileSync(wireAgent, d);
      if (open) {
        try {
          controller.enqueue(new Uint8Array(d));
        } catch {
          open = false; // the SDK closed its reader
        }
      }
    });
    child.stdout.on("end", () => {
      if (open) {
        open = false;
        try {
          controller.close();
        } catch {
          // the SDK cancelled the stream already
        }
      }
    });
  },
  cancel() {},
});
const output = new WritableStream({
  write(chunk) {
    appendFileSync(wireClient, chunk);
    return new Promise((resolve, reject) =>
      child.stdin.write(chunk, (err) => (err ? reject(err) : resolve())),
    );
  },
  close() {
    child.stdin.end();
  },
});

const sessions = {}; // name -> sessionId
const names = {}; // sessionId -> name
const updates = {}; // name -> [update]
const permissions = {}; // name -> [params]
const answers = {}; // sessionId -> [optionId | "cancel"]
const elicitations = {}; // name -> [params]
const elicitationAnswers = {}; // sessionId -> [response]
const cancelOn = {}; // sessionId -> "tool_call" | "in_progress"
let ctxRef = null;

function nameOf(sessionId) {
  return names[sessionId] ?? sessionId;
}

async function cancel(sessionId) {
  delete cancelOn[sessionId];
  await ctxRef.notify(acp.methods.agent.session.cancel, { sessionId });
}

const app = acp
  .client({ name: "claudecode-bridge-tests" })
  .onNotification(acp.methods.client.session.update, async ({ params }) => {
    const name = nameOf(params.sessionId);
    (updates[name] ??= []).push(params.update);
    const when = cancelOn[params.sessionId];
    const u = params.update;
    if (
      (when === "first_chunk" && u.sessionUpdate === "agent_message_chunk") ||
      (when === "tool_call" && u.sessionUpdate === "tool_call") ||
      (when === "in_progress" && u.sessionUpdate === "tool_call_update" && u.status === "in_progress")
    ) {
      await cancel(params.sessionId);
    }
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    const name = nameOf(params.sessionId);
    (permissions[name] ??= []).push(params);
    const queue = answers[params.sessionId] ?? [];
    const answer = queue.shift() ?? "reject_once";
    if (answer === "cancel") {
      await cancel(params.sessionId);
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: answer } };
  })
  .onRequest(acp.methods.client.elicitation.create, async ({ params }) => {
    const name = nameOf(params.sessionId);
    (elicitations[name] ??= []).push(params);
    const queue = elicitationAnswers[params.sessionId] ?? [];
    return queue.shift() ?? { action: "decline" };
  });

async function step(ctx, s) {
  try {
    switch (s.op) {
      case "initialize":
        return await ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: {
            fs: { readTextFile: false, writeTextFile: false },
            terminal: false,
            ...(s.elicitation ? { elicitation: { form: {} } } : {}),
          },
          clientInfo: { name: "claudecode-bridge-tests", version: "1" },
        });
      case "new": {
        const r = await ctx.request(acp.methods.agent.session.new, {
          cwd: s.cwd,
          mcpServers: s.mcpServers ?? [],
          ...(s.additionalDirectories ? { additionalDirectories: s.additionalDirectories } : {}),
        });
        sessions[s.name] = r.sessionId;
        names[r.sessionId] = s.name;
        return r;
      }
      case "load": {
        const sessionId = s.sessionId ?? sessions[s.from];
        names[sessionId] = s.name;
        sessions[s.name] = sessionId;
        return await ctx.request(acp.methods.agent.session.load, {
          sessionId,
          cwd: s.cwd,
          mcpServers: [],
        });
      }
      case "resume": {
        const sessionId = s.sessionId ?? sessions[s.from];
        names[sessionId] = s.name;
        sessions[s.name] = sessionId;
        return await ctx.request(acp.methods.agent.session.resume, {
          sessionId,
          cwd: s.cwd,
          mcpServers: [],
          ...(s.additionalDirectories ? { additionalDirectories: s.additionalDirectories } : {}),
        });
      }
      case "fork": {
        const r = await ctx.request("session/fork", {
          sessionId: sessions[s.from],
          cwd: s.cwd,
          mcpServers: [],
        });
        sessions[s.name] = r.sessionId;
        names[r.sessionId] = s.name;
        return r;
      }
      case "close":
        return await ctx.request(acp.methods.agent.session.close, { sessionId: sessions[s.session] });
      case "delete":
        return await ctx.request(acp.methods.agent.session.delete, { sessionId: sessions[s.session] });
      case "prompt": {
        const sessionId = sessions[s.session];
        answers[sessionId] = [...(s.permissions ?? [])];
        elicitationAnswers[sessionId] = [...(s.elicitations ?? [])];
        if (s.cancelOn) cancelOn[sessionId] = s.cancelOn;
        const prompt = typeof s.prompt === "string" ? [{ type: "text", text: s.prompt }] : s.prompt;
        const deadline = Date.now() + 120000; // a hang guard only
        for (;;) {
          try {
            return await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt });
          } catch (err) {
            const unavailable = err?.data?.reason === "unavailable";
            if (!s.retryUnavailable || !unavailable || Date.now() > deadline) throw err;
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
        }
      }
      case "wait_file": {
        const deadline = Date.now() + 120000; // a hang guard only
        while (!existsSync(s.path)) {
          if (Date.now() > deadline) throw new Error(`no file ${s.path}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return {};
      }
      case "list":
        return await ctx.request("session/list", s.cwd ? { cwd: s.cwd } : {});
      case "set_mode":
        return await ctx.request(acp.methods.agent.session.setMode, {
          sessionId: sessions[s.session],
          modeId: s.modeId,
        });
      case "set_model":
        return await ctx.request("session/set_config_option", {
          sessionId: sessions[s.session],
          configId: "model",
          value: s.value,
        });
      case "set_config":
        return await ctx.request("session/set_config_option", {
          sessionId: sessions[s.session],
          configId: s.configId,
          value: s.value,
        });
      case "parallel":
        return await Promise.all(s.steps.map((inner) => step(ctx, inner)));
      default:
        return { error: { message: `unknown op ${s.op}` } };
    }
  } catch (err) {
    return {
      error: { code: err?.code ?? null, message: String(err?.message ?? err), data: err?.data ?? null },
    };
  }
}

const results = [];
const stream = acp.ndJsonStream(output, input);
const ending = script.steps.findIndex((s) => s.op === "end");
const steps = ending < 0 ? script.steps : script.steps.slice(0, ending);
try {
  await app.connectWith(stream, async (ctx) => {
    ctxRef = ctx;
    for (const s of steps) {
      results.push(await step(ctx, s));
    }
  });
} catch (err) {
  results.push({ error: { message: "connection: " + String(err?.message ?? err) } });
}
child.stdin.end();
const timer = setTimeout(() => child.kill("SIGKILL"), 60000);
const exit = await exited;
clearTimeout(timer);
process.stdout.write(
  JSON.stringify({ results, updates, permissions, elicitations, sessions, exit, stderr }),
);
