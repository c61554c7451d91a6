// Benchmark (h): an agent's session/update notifications received by the official ACP client
// (@agentclientprotocol/sdk), timed from the prompt until the notifications of `turns` turns
// have arrived (each turn ends with a usage_update carrying the session's cost).
//
//   node bench.mjs '{"agent": [...], "env": {...}, "cwd": "/abs", "turns": N}'
//
// Prints {"seconds": s, "updates": n, "chunks": n} on stdout.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const spec = JSON.parse(process.argv[2]);
const child = spawn(spec.agent[0], spec.agent.slice(1), {
  env: spec.env,
  cwd: spec.cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));

let updates = 0;
let chunks = 0;
let turnsDone = 0;
let finished;
const allArrived = new Promise((resolve) => {
  finished = resolve;
});

const app = acp
  .client({ name: "claudecode-bridge-bench" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates += 1;
    const u = params.update;
    if (u.sessionUpdate === "agent_message_chunk") chunks += 1;
    if (u.sessionUpdate === "usage_update" && u.cost) {
      turnsDone += 1;
      if (turnsDone >= spec.turns) finished(performance.now());
    }
  })
  .onRequest(acp.methods.client.session.requestPermission, () => ({
    outcome: { outcome: "selected", optionId: "allow_once" },
  }));

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
let seconds = 0;
await app.connectWith(stream, async (ctx) => {
  await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  const { sessionId } = await ctx.request(acp.methods.agent.session.new, {
    cwd: spec.cwd,
    mcpServers: [],
  });
  const start = performance.now();
  await ctx.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "go" }],
  });
  const end = await allArrived;
  seconds = (end - start) / 1000;
});
child.stdin.end();
await exited;
process.stdout.write(JSON.stringify({ seconds, updates, chunks }));
