// Drives the bridge with the real AG-UI / CopilotKit clients, step by step, and reports
// everything the clients saw: events, errors, warnings, the messages they hold.
//
//   node drive.mjs plan.json   ->   JSON on stdout: {steps: [...], warnings: [...]}
//
// Plan: {"base": "http://127.0.0.1:PORT", "token": "...", "steps": [STEP, ...]}
//   {"op": "run", "client": "1.0.0" | "0.0.59", "path": "/agui", "threadId", "text",
//    "approve": "allow" | "deny" | null, "stopAfterText": false, "toolResults": {name: text},
//    "answer": {"answers": {question: [label]}} | {"decline": true} | null,
//    "interrupts": false}   true (client 1.0): ask for AG-UI 1.0 interrupts instead of the
//       approval / question tool calls, and answer them with `resume`
//       one user message; the page offers the tools of "toolResults"; while the run ends
//       with a pending approval call ("approve" set), question call ("answer" set) or a call
//       of one of those tools, answer it with a role:"tool" message and run again.
//   {"op": "connect", "client": ..., "path": "/agui/connect", "threadId"}
//   {"op": "parallel", "steps": [STEP, ...]}   the steps at the same time
//   {"op": "copilotkit", "transport": "auto" | "single" | "rest", "path": "/copilotkit",
//    "agent": "default", "threadId", "text", "approve": ..., "answer": ...}   headless
//       @copilotkit/core running that agent (reports the agents the runtime listed), the
//       approval and question tools as human-in-the-loop frontend tools
//   {"op": "stop", "transport": "auto" | "single" | "rest", "path": "/copilotkit",
//    "agent": "default", "threadId"}   @copilotkit/core's Stop (stopAgent) on that thread;
//       reports the runtime's answers to the stop requests it sent ("stops")
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

import * as agui1 from "agui-client-1.0.0";
import * as agui059 from "agui-client-0.0.59";
import { CopilotKitCore } from "@copilotkit/core";
import { z } from "zod";

const APPROVAL_TOOL = "claudecode_approval";
const QUESTION_TOOL = "claudecode_question";
const warnings = [];
for (const level of ["warn", "error"]) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    warnings.push(`${level}: ${args.map((a) => (a instanceof Error ? a.stack : String(a))).join(" ")}`);
    original(...args);
  };
}

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const headers = plan.token ? { Authorization: `Bearer ${plan.token}` } : {};
const clients = { "1.0.0": agui1, "0.0.59": agui059 };

function pendingCall(messages, names) {
  const answered = new Set(messages.filter((m) => m.role === "tool").map((m) => m.toolCallId));
  for (const message of messages) {
    for (const call of message.toolCalls ?? []) {
      if (names.has(call.function.name) && !answered.has(call.id)) return call;
    }
  }
  return null;
}

async function runOnce(agent, record, stopUrl, stopAfterText, tools, extra = {}) {
  let stopped = false;
  const subscriber = {
    onEvent({ event }) {
      record.events.push(event);
      if (stopAfterText && !stopped && event.type === "TEXT_MESSAGE_CONTENT") {
        stopped = true;
        fetch(stopUrl, { method: "POST", headers }).then(
          (r) => r.json().then((body) => record.stops.push(body)),
          (e) => record.errors.push(`stop: ${e}`),
        );
      }
    },
    onRunErrorEvent({ event }) {
      record.runErrors.push(event);
    },
  };
  try {
    const result = await agent.runAgent({ runId: randomUUID(), tools, ...extra }, subscriber);
    record.results.push({ newMessages: result.newMessages.length });
  } catch (error) {
    record.errors.push(String(error?.stack ?? error));
  }
}

async function stepRun(step) {
  const { HttpAgent } = clients[step.client];
  const record = { events: [], errors: [], runErrors: [], results: [], stops: [] };
  const agent = new HttpAgent({ url: plan.base + step.path, headers, threadId: step.threadId });
  agent.addMessage({ id: randomUUID(), role: "user", content: step.text });
  const stopUrl = `${plan.base}/agui/stop/${encodeURIComponent(step.threadId)}`;
  const results = step.toolResults ?? {};
  const tools = Object.keys(results).map((name) => ({
    name,
    description: `the page's ${name}`,
    parameters: { type: "object", properties: {} },
  }));
  const names = new Set(Object.keys(results));
  if (step.approve) names.add(APPROVAL_TOOL);
  if (step.answer) names.add(QUESTION_TOOL);
  if (step.interrupts) {
    const forwardedProps = { claudecode: { interrupts: true } };
    await runOnce(agent, record, stopUrl, step.stopAfterText, tools, { forwardedProps });
    for (let round = 0; round < 8 && agent.pendingInterrupts?.length; round++) {
      record.interrupts = [...(record.interrupts ?? []), ...agent.pendingInterrupts];
      const resume = agent.pendingInterrupts.map((i) => ({
        interruptId: i.id,
        status: "resolved",
        payload: i.reason === "claudecode.question" ? step.answer : { behavior: step.approve },
      }));
      await runOnce(agent, record, stopUrl, false, tools, { forwardedProps, resume });
    }
    record.messages = agent.messages;
    return record;
  }
  await runOnce(agent, record, stopUrl, step.stopAfterText, tools);
  for (let round = 0; round < 8; round++) {
    const call = pendingCall(agent.messages, names);
    if (!call) break;
    const approval = call.function.name === APPROVAL_TOOL;
    const question = call.function.name === QUESTION_TOOL;
    if (approval) record.approvals = (record.approvals ?? 0) + 1;
    if (question) record.questionArgs = [...(record.questionArgs ?? []), JSON.parse(call.function.arguments)];
    const content = approval
      ? step.approve
      : question
        ? JSON.stringify(step.answer)
        : results[call.function.name];
    agent.addMessage({ id: randomUUID(), role: "tool", toolCallId: call.id, content });
    await runOnce(agent, record, stopUrl, false, tools);
  }
  record.messages = agent.messages;
  return record;
}

async function stepConnect(step) {
  const { HttpAgent } = clients[step.client];
  class Connecting extends HttpAgent {
    connect(input) {
      return this.run(input);
    }
  }
  const record = { events: [], errors: [] };
  const agent = new Connecting({ url: plan.base + step.path, headers, threadId: step.threadId });
  try {
    await agent.connectAgent({ runId: randomUUID() }, { onEvent: ({ event }) => record.events.push(event) });
  } catch (error) {
    record.errors.push(String(error?.stack ?? error));
  }
  record.messages = agent.messages;
  return record;
}

function newCore(step, record) {
  // CopilotKit's core only talks to its runtime where a `window` exists (a browser); a
  // bare global object is enough for it headless.
  globalThis.window ??= globalThis;
  const core = new CopilotKitCore({
    runtimeUrl: plan.base + step.path,
    runtimeTransport: step.transport,
    headers,
  });
  core.subscribe({
    onError: ({ error, code }) => record.coreErrors.push(`${code}: ${error?.message ?? error}`),
  });
  return core;
}

async function agentOf(core, step, record) {
  const deadline = Date.now() + 30_000;
  const agentId = step.agent ?? "default";
  let agent;
  while (!(agent = core.getAgent(agentId)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  record.agents = Object.keys(core.agents);
  if (!agent) record.errors.push(`no agent ${agentId}: ${core.runtimeConnectionStatus}`);
  return agent;
}

async function stepStop(step) {
  const record = { events: [], errors: [], coreErrors: [], stops: [] };
  const core = newCore(step, record);
  const agent = await agentOf(core, step, record);
  if (!agent) return record;
  record.transport = core.runtimeTransport;
  agent.threadId = step.threadId;
  // The core sends its stop and forgets it: watch the requests it makes to read the answers.
  const sent = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (url, init) => {
    const answer = realFetch(url, init);
    const body = typeof init?.body === "string" ? init.body : "";
    if (String(url).includes("/stop/") || body.includes('"agent/stop"')) sent.push(answer);
    return answer;
  };
  try {
    core.stopAgent({ agent });
    for (const answer of await Promise.all(sent)) {
      record.stops.push({ status: answer.status, body: await answer.json() });
    }
  } catch (error) {
    record.errors.push(String(error?.stack ?? error));
  } finally {
    globalThis.fetch = realFetch;
  }
  return record;
}

async function stepCopilotKit(step) {
  const record = { events: [], errors: [], coreErrors: [] };
  const core = newCore(step, record);
  for (const [name, value] of Object.entries(step.toolResults ?? {})) {
    core.addTool({
      name,
      description: `the page's ${name}`,
      followUp: true,
      parameters: z.object({}).passthrough(),
      handler: async (args) => {
        record.toolCalls = [...(record.toolCalls ?? []), { name, args }];
        return value;
      },
    });
  }
  if (step.approve) {
    core.addTool({
      name: APPROVAL_TOOL,
      description: "Ask the user to approve a tool call",
      followUp: true,
      parameters: z.object({ pendingId: z.string(), toolName: z.string() }).passthrough(),
      handler: async (args) => {
        record.approvalArgs = args;
        return step.approve;
      },
    });
  }
  if (step.answer) {
    // What a page's useHumanInTheLoop render does: show the questions, return the answers.
    core.addTool({
      name: QUESTION_TOOL,
      description: "Ask the user the agent's questions",
      followUp: true,
      parameters: z
        .object({
          pendingId: z.string(),
          questions: z.array(z.object({ question: z.string() }).passthrough()),
        })
        .passthrough(),
      handler: async (args) => {
        record.questionArgs = [...(record.questionArgs ?? []), args];
        return JSON.stringify(step.answer);
      },
    });
  }
  const agent = await agentOf(core, step, record);
  if (!agent) return record;
  record.transport = core.runtimeTransport;
  agent.threadId = step.threadId;
  agent.subscribe({ onEvent: ({ event }) => record.events.push(event) });
  agent.addMessage({ id: randomUUID(), role: "user", content: step.text });
  try {
    await core.runAgent({ agent });
  } catch (error) {
    record.errors.push(String(error?.stack ?? error));
  }
  record.messages = agent.messages;
  return record;
}

const ops = { run: stepRun, connect: stepConnect, copilotkit: stepCopilotKit, stop: stepStop };
async function parallel(step) {
  const results = await Promise.all(step.steps.map((inner) => ops[inner.op](inner)));
  return { events: [], errors: [], parallel: results };
}
ops.parallel = parallel;

const steps = [];
for (const step of plan.steps) {
  steps.push({ op: step.op, ...(await ops[step.op](step)) });
}
process.stdout.write(JSON.stringify({ steps, warnings }));
