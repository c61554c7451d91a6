"""The real AG-UI / CopilotKit npm clients (package.json, drive.mjs) and their Python driver."""
