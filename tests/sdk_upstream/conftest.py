"""The vendored programs are run by test_upstream.py in their own interpreters (with
``claude_agent_sdk`` bound to the drop-in), never collected in this one."""

collect_ignore = ["e2e-tests", "examples", "shim", "harness.py"]
