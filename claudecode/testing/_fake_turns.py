"""One scripted turn of the fake CLI: stream the model's messages, run tools, write a result.

A turn is a list of *messages* (one per simulated API call); each message is a list of
content blocks. For every message the fake writes ``system/status``, the ``stream_event``
sequence (when partial messages are on), one ``assistant`` line per block, and then handles
each ``tool_use`` block: PreToolUse hooks, the permission prompt, the simulated tool,
PostToolUse hooks and the ``user`` tool_result line. A ``result`` line ends the turn.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from . import _fake_messages as m
from ._fake_interrupt import Interrupted
from ._fake_tooluse import OpenBlock, TurnState, tool_use

if TYPE_CHECKING:
    from ._fake_cli import FakeCLI

__all__ = ("normalize_turn", "run_turn")

Json = dict[str, Any]

_TURN_KEYS = frozenset(
    {"messages", "blocks", "delay", "chunk", "garbage_lines", "hang", "big_line_bytes", "usage"}
)
_MESSAGE_KEYS = frozenset({"blocks", "stop_reason", "usage", "error", "delay", "chunk"})
_REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)


def normalize_turn(turn: Any) -> Json:
    """Expand the short forms of a turn (a string, or ``{"blocks": [...]}``) to the full one.

    Raises:
        ValueError: if the turn, a message or a block is malformed or has unknown keys.
    """
    if isinstance(turn, str):
        turn = {"blocks": [turn]}
    if not isinstance(turn, dict):
        raise ValueError(f"a turn must be a string or an object, not {turn!r}")
    unknown = sorted(set(turn) - _TURN_KEYS)
    if unknown:
        raise ValueError(f"unknown turn keys: {', '.join(unknown)}")
    turn = dict(turn)
    messages = turn.pop("messages", None)
    if messages is None:
        messages = [{"blocks": turn.pop("blocks", [])}]
    normal = []
    for message in messages:
        if isinstance(message, list):
            message = {"blocks": message}
        if not isinstance(message, dict) or set(message) - _MESSAGE_KEYS:
            raise ValueError(f"bad message in a turn: {message!r}")
        blocks = [_normalize_block(b) for b in message.get("blocks", [])]
        normal.append({**message, "blocks": blocks})
    turn["messages"] = normal
    result: Json = turn
    return result


def _normalize_block(block: Any) -> Json:
    if isinstance(block, str):
        return {"type": "text", "text": block}
    if not isinstance(block, dict) or block.get("type") not in ("text", "thinking", "tool_use"):
        raise ValueError(f"a block must be text, thinking or tool_use: {block!r}")
    if block["type"] == "tool_use" and not isinstance(block.get("name"), str):
        raise ValueError(f"a tool_use block needs a name: {block!r}")
    return dict(block)


def _text_of(cli: FakeCLI, spec: Json) -> str:
    """A text block's text: with ``by_answer`` ``{"question", "texts": {answer: text}}``, the
    text for the answer the user gave to that question (``text`` when none fits)."""
    by_answer = spec.get("by_answer")
    if isinstance(by_answer, dict):
        texts = by_answer.get("texts") or {}
        answer = cli.answers.get(str(by_answer.get("question")))
        if answer is not None and answer in texts:
            return str(texts[answer])
    return str(spec.get("text", ""))


def _prompt_text(user: Json) -> str:
    content = (user.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _next_turn(cli: FakeCLI, user: Json) -> Json:
    turns = cli.script.get("turns") or []
    if cli.turn_index < len(turns):
        turn = turns[cli.turn_index]
    elif "exhausted" in cli.script:
        turn = cli.script["exhausted"]
    else:
        turn = f"Echo: {_prompt_text(user)}"
    turn = normalize_turn(turn)
    if cli.turn_index == 0:
        for key in ("garbage_lines", "big_line_bytes"):
            if key in cli.script and key not in turn:
                turn[key] = cli.script[key]
    cli.turn_index += 1
    return turn


def run_turn(cli: FakeCLI, user: Json) -> None:
    """Run the next scripted turn in answer to the host's ``user`` message."""
    info = cli.info
    turn = _next_turn(cli, user)
    if cli.pending_status is not None:
        cli.out.send(cli.pending_status)
        cli.pending_status = None
    if cli.replay_user_messages:
        cli.out.send(
            {
                "type": "user",
                "message": user.get("message"),
                "session_id": info.session_id,
                "parent_tool_use_id": None,
                "uuid": user.get("uuid") or m.new_uuid(),
                "isReplay": True,
            }
        )
    for line in turn.get("garbage_lines") or []:
        cli.out.send_raw(str(line))
    cli.out.send(m.system_init(info))
    if turn.get("hang"):
        from ._fake_output import hang_forever

        hang_forever()
    messages = list(turn["messages"])
    if turn.get("big_line_bytes"):
        big = {
            "type": "tool_use",
            "name": "Bash",
            "input": {"command": "cat big.log"},
            "permission": False,
            "result_bytes": int(turn["big_line_bytes"]),
        }
        messages.insert(0, {"blocks": [big]})
    state = TurnState()
    cli.turn_active, cli.interrupt_requested = True, False
    try:
        for number, message in enumerate(messages):
            if "error" in message:
                _api_error(cli, state, message["error"])
                return
            _stream_message(cli, turn, message, number, len(_prompt_text(user)), state)
            for block in message["blocks"]:
                if block.get("type") == "tool_use":
                    tool_use(cli, block, state)
        _result(cli, state, "success", terminal_reason="completed")
        cli.last_turn_failed = False
    except Interrupted as exc:
        _interrupted(cli, state, exc)
    finally:
        cli.turn_active = cli.interrupt_requested = False


def _setting(message: Json, turn: Json, key: str, default: Any) -> Any:
    for source in (message, turn):
        if source.get(key) is not None:
            return source[key]
    return default


def _stream_message(
    cli: FakeCLI, turn: Json, message: Json, number: int, prompt_len: int, state: TurnState
) -> None:
    info, out, partial = cli.info, cli.out, cli.partial_messages
    usage = message.get("usage") or turn.get("usage") or {}
    state.message_id = message_id = m.new_id("msg_")
    state.request_id = m.new_id("req_")
    state.message_ids.append(message_id)
    state.input_tokens = int(usage.get("input_tokens", 2500 + prompt_len // 4 + 90 * number))
    state.usage.input_tokens += state.input_tokens
    state.usage.api_ms += 20
    delay = float(_setting(message, turn, "delay", 0.0))
    chunk = max(1, int(_setting(message, turn, "chunk", 16)))

    def event(ev: Json, **extra: Any) -> None:
        if partial:
            out.send(m.stream_event(info, ev, message_id, **extra))

    out.send(m.system_status(info))
    start: Json = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": info.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": m.message_usage(state.input_tokens),
    }
    event({"type": "message_start", "message": start}, ttft_ms=15)
    output_chars = 0
    has_tool = False
    for index, spec in enumerate(message["blocks"]):
        kind = spec.get("type")
        if kind == "text":
            payload = _text_of(cli, spec)
            block: Json = {"type": "text", "text": ""}
            delta_type, field_name = "text_delta", "text"
        elif kind == "thinking":
            payload = str(spec.get("thinking", ""))
            block = {"type": "thinking", "thinking": "", "signature": ""}
            delta_type, field_name = "thinking_delta", "thinking"
        elif kind == "tool_use":
            has_tool = True
            spec.setdefault("id", m.new_id("toolu_"))
            payload = json.dumps(spec.get("input") or {})
            block = {"type": "tool_use", "id": spec["id"], "name": spec["name"], "input": {}}
            delta_type, field_name = "input_json_delta", "partial_json"
        else:
            raise ValueError(f"unknown block type {kind!r}")
        thinking_extra = {"thinking_display": "updates"} if kind == "thinking" else {}
        state.open_block = OpenBlock(index, block)
        event(
            {"type": "content_block_start", "index": index, "content_block": block},
            **thinking_extra,
        )
        estimated = 0
        for pos in range(0, len(payload), chunk):
            cli.sleep(delay)
            piece = payload[pos : pos + chunk]
            state.open_block.so_far += piece
            event(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": delta_type, field_name: piece},
                },
                **thinking_extra,
            )
            if kind == "thinking" and partial:
                step = max(1, len(piece) // 4)
                estimated += step
                out.send(
                    {
                        "type": "system",
                        "subtype": "thinking_tokens",
                        "estimated_tokens": estimated,
                        "estimated_tokens_delta": step,
                        "session_id": info.session_id,
                        "uuid": m.new_uuid(),
                    }
                )
        output_chars += len(payload)
        if kind == "text":
            done: Json = {"type": "text", "text": payload}
            state.result_text = payload
        elif kind == "thinking":
            signature = f"fakesig_{m.new_uuid().replace('-', '')}"
            event(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": signature},
                }
            )
            done = {"type": "thinking", "thinking": payload, "signature": signature}
        else:
            done = {
                "type": "tool_use",
                "id": spec["id"],
                "name": spec["name"],
                "input": spec.get("input") or {},
            }
        out.send(m.assistant(info, message_id, state.request_id, done, state.input_tokens))
        state.open_block = None
        event({"type": "content_block_stop", "index": index})
    output_tokens = int(usage.get("output_tokens", 1 + output_chars // 4))
    state.usage.output_tokens += output_tokens
    state.stop_reason = message.get("stop_reason") or ("tool_use" if has_tool else "end_turn")
    event(
        {
            "type": "message_delta",
            "delta": {"stop_reason": state.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
    )
    event({"type": "message_stop"})
    state.message_id = None


# ----------------------------------------------------------------------------- endings


def _result(
    cli: FakeCLI, state: TurnState, subtype: str, *, terminal_reason: str, **kw: Any
) -> None:
    is_error = subtype != "success" or bool(kw.pop("is_error", False))
    cli.out.send(
        m.result(
            cli.info,
            subtype=subtype,
            is_error=is_error,
            text=kw.pop("text", state.result_text),
            stop_reason=kw.pop("stop_reason", state.stop_reason),
            terminal_reason=terminal_reason,
            num_turns=max(1, len(state.message_ids)),
            usage=state.usage,
            duration_ms=int((time.monotonic() - state.started) * 1000),
            permission_denials=state.denials,
            message_ids=state.message_ids,
            **kw,
        )
    )


def _api_error(cli: FakeCLI, state: TurnState, error: Json) -> None:
    status = int(error.get("status", 500))
    text = f"API Error: {status} {error.get('message', 'fake API error')}"
    cli.out.send(m.system_status(cli.info))
    cli.out.send(
        m.synthetic_api_error_assistant(cli.info, status, text, str(error.get("type", "api_error")))
    )
    state.result_text = text
    _result(
        cli,
        state,
        "success",
        terminal_reason="api_error",
        is_error=True,
        stop_reason="stop_sequence",
        api_error_status=status,
    )
    cli.last_turn_failed = True


def _interrupted(cli: FakeCLI, state: TurnState, exc: Interrupted) -> None:
    info, out = cli.info, cli.out
    if exc.open_request_id is not None or exc.tool_result_sent:
        if exc.open_request_id is not None:
            out.send({"type": "control_cancel_request", "request_id": exc.open_request_id})
            tool_id = state.current_tool_id
            if tool_id is not None:
                out.send(
                    m.tool_result_user(
                        info,
                        tool_id,
                        _REJECTED,
                        is_error=True,
                        tool_use_result=f"Error: {_REJECTED}",
                        decision={"decision": "reject", "source": "user_abort"},
                        non_execution_kind="user-interrupt",
                    )
                )
        out.send(m.text_user(info, "[Request interrupted by user for tool use]"))
        reason = "aborted_tools"
    else:
        opened = state.open_block
        if opened is not None and opened.so_far and opened.block["type"] in ("text", "thinking"):
            partial = dict(opened.block)
            partial[opened.block["type"]] = opened.so_far
            out.send(
                m.assistant(
                    info,
                    state.message_id or "",
                    state.request_id,
                    partial,
                    state.input_tokens,
                    aborted=True,
                )
            )
        out.send(m.text_user(info, "[Request interrupted by user]"))
        if cli.partial_messages and state.message_id is not None:
            mid = state.message_id
            if opened is not None:
                out.send(
                    m.stream_event(info, {"type": "content_block_stop", "index": opened.index}, mid)
                )
            out.send(
                m.stream_event(
                    info,
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": None, "stop_sequence": None},
                        "usage": {"output_tokens": 1},
                    },
                    mid,
                )
            )
            after = (opened.index + 1) if opened is not None else 0
            out.send(
                m.stream_event(
                    info,
                    {"type": "message_stop"},
                    mid,
                    abandoned_blocks={"api_message_id": mid, "from_block_index": after},
                )
            )
        reason = "aborted_streaming"
    diagnostic = "[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"
    _result(
        cli,
        state,
        "error_during_execution",
        terminal_reason=reason,
        errors=[diagnostic],
        stop_reason=None,
    )
    cli.last_turn_failed = False
