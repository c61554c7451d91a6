"""The real AG-UI / CopilotKit npm clients (package.json, drive.mjs); their Python driver is
tests.support.agui_clients."""
