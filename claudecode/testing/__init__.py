"""Test helpers: a fake Claude Code CLI that is a real subprocess speaking stream-json.

The fake is a separate program, ``python -m claudecode.testing [ARGS]``, that accepts the
real CLI's argv (``-p --input-format stream-json --output-format stream-json --verbose
--permission-prompt-tool stdio --include-partial-messages --model X --resume ID …``;
unknown flags are ignored), reads NDJSON on stdin and writes NDJSON on stdout, one flushed
line per message, in the shapes of the recorded 2.1.332 transcripts. It uses only the
standard library and plain JSON — no anyio, no client types — so it is an independent peer
of the client under test. It behaves like the real CLI where the transcripts show how:

* ``initialize`` → success with ``commands``, ``models``, ``pid``, ``claude_code_version``
  (``"fake"``), ``current_permission_mode``; hooks registered there
  (``hooks.PreToolUse[].matcher/hookCallbackIds``) fire as ``hook_callback`` requests.
* ``interrupt`` → ``{"still_queued": []}``; a streaming turn ends with an ``aborted``
  partial assistant, ``[Request interrupted by user]`` and ``result/error_during_execution``
  with ``terminal_reason`` ``aborted_streaming``; an open permission prompt or hook gets a
  ``control_cancel_request`` and the turn ends ``aborted_tools``.
* ``set_model``, ``set_permission_mode`` (invalid mode → error ``invalid_mode`` with the real
  text), ``set_max_thinking_tokens``, ``apply_flag_settings`` (``settings`` not an object →
  the real error text), ``mcp_status``, ``get_context_usage``; any other
  subtype → error ``Unsupported control request subtype: X`` / ``unsupported_request``.
* each ``user`` message runs the next scripted turn: ``system/init``, ``system/status``,
  ``stream_event`` deltas (only with ``--include-partial-messages``), one ``assistant`` line
  per block, tool handling, then ``result`` (usage, ``modelUsage.<model>.contextWindow``,
  ``total_cost_usd``, ``permission_denials``). ``--replay-user-messages`` echoes prompts.
* a ``tool_use`` block: PreToolUse hooks (``permissionDecision`` allow / deny / ask is
  honoured), then ``can_use_tool`` if the tool needs permission (allow runs it with
  ``updatedInput``; deny writes an ``is_error`` tool_result and a permission denial), then
  the simulated tool — ``Bash`` really runs ``/bin/sh -c`` in the cwd, ``Write``/``Edit``
  really write, ``Read`` reads, ``AskUserQuestion`` reads the ``answers`` of its (updated)
  input as the real CLI does — then PostToolUse hooks and the ``user`` tool_result line.
* stdin EOF: queued turns finish, then exit 0 (1 if the last turn was an API error).
* ``--version`` prints ``fake (Claude Code)``; stream-json output under ``-p`` without
  ``--verbose`` exits 1 with the real error text.

Launching: :func:`fake_cli_command` writes the script and a ``/bin/sh`` wrapper and returns
the wrapper's path, to be used as the client's ``cli_path``. The script is found through the
environment variable ``CLAUDECODE_FAKE_CLI_SCRIPT`` (:data:`SCRIPT_ENV_VAR`); without it the
fake answers every prompt with ``Echo: <prompt>`` (the ``--demo`` stand-in).

Script format (a JSON object; unknown keys are an error, exit code 2)::

    {
      # turns mode: the Nth user message gets the Nth turn; afterwards "exhausted" (a turn)
      # or an echo turn
      "turns": [TURN, ...],
      "exhausted": TURN,

      # replay mode: play a recorded transcript instead (see below)
      "replay": "/path/to/transcript.jsonl", "proc": "cli", "replay_speed": 0,

      # identity
      "model": "claude-opus-5-5", "version": "fake", "session_id": "...",
      "include_partial_messages": null,   # null = follow --include-partial-messages
      "transcripts": "/config/dir",       # keep the session's transcript where the real
                                          # CLI would under that config dir (projects/<slug>/
                                          # <session id>.jsonl), for history and --resume
      "record_path": "/tmp/rec.jsonl",    # JSONL: {argv, cwd, pid, env, arg_files: the
                                          # --mcp-config / --settings files by path}, then one
                                          # {"received": msg} per stdin line
      "handler": "/path/h.py:handle",     # or "module:function": called with every host
                                          # message (a dict); a returned list of lines
                                          # (dicts or raw strings) is written instead of the
                                          # default behaviour; None keeps the default

      # faults
      "stderr_lines": ["..."],            # written to stderr at start
      "exit_code": 0,                     # exit code on stdin EOF
      "crash_after_lines": N,             # os._exit(crash_exit_code) after N stdout lines
      "crash_after_type": "can_use_tool", # ... or right after the first line of this
                                          # type / subtype / request subtype
      "crash_exit_code": 1,
      "garbage_lines": ["not json"],      # raw lines written before the first turn
      "big_line_bytes": N,                # first turn starts with a tool_result of N bytes
      "hang": true,                       # write nothing, never exit (stderr_lines still go)
      "hang_before_init": true,           # never answer initialize, never exit
      "ignore_sigterm": true              # only SIGKILL ends it
    }

    TURN = "text"                                   # one text block
         | {"blocks": [BLOCK, ...], ...options}     # one message
         | {"messages": [{"blocks": [BLOCK, ...], "stop_reason": "...",
                          "usage": {"input_tokens": N, "output_tokens": N},
                          "error": {"status": 400, "message": "...", "type": "..."}}, ...],
            "delay": 0.0,          # seconds before each delta (per message / turn)
            "chunk": 16,           # characters per delta
            "garbage_lines": [...], "big_line_bytes": N,
            "hang": true}          # hang after system/init
    BLOCK = "text"
          | {"type": "text", "text": "...",
             "by_answer": {"question": "...", "texts": {"answer": "text"}}}  # see text_block
          | {"type": "thinking", "thinking": "..."}
          | {"type": "tool_use", "name": "Bash", "input": {...}, "id": "toolu_...",
             "permission": true,              # ask can_use_tool first (default: see
                                              # tool_use_block)
             "result": "...", "is_error": false, "tool_use_result": ...,  # canned result
             "blocked_path": "...", "result_bytes": N}

A message with ``error`` ends the turn as the real CLI ends a failed API call: a synthetic
assistant line and ``result`` with ``is_error: true`` and ``terminal_reason: "api_error"``.

Replay mode writes the transcript's ``from_cli`` lines (of one ``proc``) in order; at each
``to_cli`` line it waits until the host sent a message of the same type/subtype. The CLI's
own request ids are kept (the host must answer them; its answer is matched by id), and the
recorded answers to the host's control requests go out with the host's real request id.
Fault keys work in both modes.

Example::

    from claudecode.testing import fake_cli_command, script, text_turn, tool_turn

    cli = fake_cli_command(
        script(text_turn("Hello!"), tool_turn("Bash", {"command": "touch made.txt"})),
        tmp_path,
    )
    # give `cli` to the client as its CLI path
"""

from ._fake_script import SCRIPT_ENV_VAR as SCRIPT_ENV_VAR
from ._scripts import FAKE_CLI_MODULE as FAKE_CLI_MODULE
from ._scripts import fake_cli_argv as fake_cli_argv
from ._scripts import fake_cli_command as fake_cli_command
from ._scripts import replay_script as replay_script
from ._scripts import script as script
from ._scripts import text_block as text_block
from ._scripts import text_turn as text_turn
from ._scripts import thinking_block as thinking_block
from ._scripts import tool_turn as tool_turn
from ._scripts import tool_use_block as tool_use_block
from ._scripts import turn as turn

__all__ = (
    "FAKE_CLI_MODULE",
    "SCRIPT_ENV_VAR",
    "fake_cli_argv",
    "fake_cli_command",
    "replay_script",
    "script",
    "text_block",
    "text_turn",
    "thinking_block",
    "tool_turn",
    "tool_use_block",
    "turn",
)
