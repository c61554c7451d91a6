// A minimal CopilotKit chat on claudecode-bridge: Claude Code's replies stream into
// CopilotChat, every tool call is rendered with its result, and permission requests (the
// bridge's `claudecode_approval` tool) and the agent's questions (`claudecode_question`)
// are answered from the page.
import React, { useState } from "react";
import { createRoot } from "react-dom/client";
import {
  CopilotChat,
  CopilotKitProvider,
  useHumanInTheLoop,
  useRenderTool,
} from "@copilotkit/react-core/v2";
import "@copilotkit/react-core/v2/styles.css";
import { z } from "zod";

import "./page.css";

const RUNTIME_URL = import.meta.env.VITE_RUNTIME_URL ?? "/copilotkit";
// Which of the bridge's agents to talk to: `?agent=NAME`, a name from `serve --agents FILE`
// (the runtime's `info` lists them); none: CopilotKit's `default`.
const AGENT_ID = new URLSearchParams(window.location.search).get("agent") ?? undefined;

const approvalArgs = z
  .object({
    pendingId: z.string(),
    toolName: z.string(),
    title: z.string().optional(),
    input: z.record(z.string(), z.any()).optional(),
  })
  .passthrough();

function answerOf(result) {
  try {
    return JSON.parse(result).behavior;
  } catch {
    return result;
  }
}

function Approval({ args, status, respond, result }) {
  if (status !== "executing") {
    const answer = result === undefined ? "…" : answerOf(result) === "allow" ? "approved" : "denied";
    return (
      <div className="card approval done" data-testid="approval-done">
        {args?.title ?? args?.toolName}: {answer}
      </div>
    );
  }
  return (
    <div className="card approval" data-testid="approval">
      <div className="label">Claude wants to run {args.toolName}</div>
      <code>{args.title}</code>
      <div className="buttons">
        <button onClick={() => respond({ behavior: "allow" })}>Approve</button>
        <button onClick={() => respond({ behavior: "deny", message: "Not now." })}>Deny</button>
      </div>
    </div>
  );
}

const questionArgs = z
  .object({
    pendingId: z.string(),
    questions: z.array(
      z
        .object({
          question: z.string(),
          header: z.string().optional(),
          options: z.array(z.object({ label: z.string(), description: z.string().optional() })),
          multiSelect: z.boolean().optional(),
        })
        .passthrough(),
    ),
  })
  .passthrough();

// The agent's questions (AskUserQuestion): one group of choices per question (checkboxes for
// a multi-select); the result `{answers: {question: [labels]}}` answers them, `{decline: true}`
// declines them.
function Questions({ args, status, respond, result }) {
  const [picked, setPicked] = useState({});
  if (status !== "executing") {
    let said = "…";
    try {
      const answer = JSON.parse(result);
      said = answer.decline ? "declined" : Object.values(answer.answers ?? {}).flat().join(", ");
    } catch {
      // still streaming, or no result yet
    }
    return (
      <div className="card question done" data-testid="question-done">
        {args?.questions?.[0]?.question}: {said}
      </div>
    );
  }
  const toggle = (q, label) =>
    setPicked((old) => {
      const now = old[q.question] ?? [];
      const next = q.multiSelect
        ? now.includes(label)
          ? now.filter((l) => l !== label)
          : [...now, label]
        : [label];
      return { ...old, [q.question]: next };
    });
  return (
    <div className="card question" data-testid="question">
      {args.questions.map((q) => (
        <fieldset key={q.question}>
          <legend>{q.header ? `${q.header}: ` : ""}{q.question}</legend>
          {q.options.map((o) => (
            <label key={o.label} title={o.description}>
              <input
                type={q.multiSelect ? "checkbox" : "radio"}
                name={q.question}
                checked={(picked[q.question] ?? []).includes(o.label)}
                onChange={() => toggle(q, o.label)}
              />
              {o.label}
              {o.description ? <small> — {o.description}</small> : null}
            </label>
          ))}
        </fieldset>
      ))}
      <div className="buttons">
        <button onClick={() => respond(JSON.stringify({ answers: picked }))}>Answer</button>
        <button onClick={() => respond(JSON.stringify({ decline: true }))}>Decline</button>
      </div>
    </div>
  );
}

function ToolCard({ name, status, result, parameters, args }) {
  const input = parameters ?? args ?? {};
  return (
    <div className="card tool" data-testid="tool" data-tool={name} data-status={status}>
      <div className="label">
        {status === "complete" ? "✓" : "…"} {name}
      </div>
      {input.command ? <code>{input.command}</code> : null}
      {status === "complete" && result ? <pre data-testid="tool-result">{String(result)}</pre> : null}
    </div>
  );
}

function ClaudeCodeTools() {
  useHumanInTheLoop({
    name: "claudecode_approval",
    description: "Ask the user to approve a Claude Code tool call",
    parameters: approvalArgs,
    render: Approval,
  });
  useHumanInTheLoop({
    name: "claudecode_question",
    description: "Ask the user the questions Claude Code has",
    parameters: questionArgs,
    render: Questions,
  });
  useRenderTool({ name: "*", render: (props) => <ToolCard {...props} /> }, []);
  return null;
}

function App() {
  return (
    <CopilotKitProvider runtimeUrl={new URL(RUNTIME_URL, window.location.origin).href}>
      <ClaudeCodeTools />
      <main>
        <h1>Claude Code, in CopilotKit</h1>
        <CopilotChat agentId={AGENT_ID} />
      </main>
    </CopilotKitProvider>
  );
}

createRoot(document.getElementById("root")).render(<App />);
