// A real browser on the CopilotKit example page: Debian's chromium, driven by playwright-core.
//
//   node browser.mjs URL SCREENSHOT.png   ->   JSON on stdout: what the page showed
//
// Types a message, answers the agent's question (picks "Casual") and approves the tool call
// from the page, waits for the reply and the rendered tool result, and keeps a screenshot. Console errors and page errors are reported.
import { chromium } from "playwright-core";

const [url, screenshot] = process.argv.slice(2);
const report = { consoleErrors: [], pageErrors: [], steps: [] };
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  page.on("console", (msg) => {
    if (msg.type() === "error") report.consoleErrors.push(msg.text());
  });
  page.on("pageerror", (error) => report.pageErrors.push(String(error)));
  await page.goto(url);
  const input = page.locator("textarea:visible").first();
  await input.waitFor({ timeout: 60_000 });
  report.steps.push("loaded");
  await input.fill("Please run echo in the shell.");
  // The chat renders before CopilotKit has connected to the runtime, and until it has, Enter
  // and the send button do nothing (the message stays in the box). The send button is enabled
  // once a non-empty message can go: wait for that, send, and see the message posted.
  await page
    .locator('[data-testid="copilot-send-button"]:not([disabled])')
    .waitFor({ timeout: 60_000 });
  report.steps.push("connected");
  await input.press("Enter");
  await page.getByTestId("copilot-user-message").first().waitFor({ timeout: 60_000 });
  const answer = page.getByRole("button", { name: "Answer" });
  await answer.waitFor({ timeout: 60_000 });
  report.steps.push("question shown");
  report.questionText = await page.getByTestId("question").innerText();
  await page.getByRole("radio", { name: /Casual/ }).check();
  await answer.click();
  const approve = page.getByRole("button", { name: "Approve" });
  await approve.waitFor({ timeout: 60_000 });
  report.steps.push("approval shown");
  report.approvalText = await page.getByTestId("approval").innerText();
  await approve.click();
  await page.getByText("All done", { exact: false }).first().waitFor({ timeout: 60_000 });
  report.steps.push("reply shown");
  const result = page.getByTestId("tool-result").filter({ hasText: "hello-from-bash" }).first();
  await result.waitFor({ timeout: 60_000 });
  report.toolResult = await result.innerText();
  report.bodyText = await page.locator("body").innerText();
  await page.screenshot({ path: screenshot, fullPage: true });
  report.steps.push("screenshot");
} catch (error) {
  report.error = String(error?.stack ?? error);
  const pages = browser.contexts().flatMap((c) => c.pages());
  if (pages.length) {
    report.bodyText = await pages[0].locator("body").innerText().catch(() => "");
    await pages[0].screenshot({ path: screenshot, fullPage: true }).catch(() => {});
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(report));
