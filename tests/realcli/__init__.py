"""Tests against the real Claude Code CLI, and the infrastructure they need.

* :mod:`.fake_api` / :mod:`.script`: a scriptable fake Anthropic Messages API on 127.0.0.1.
* :mod:`.proxy`: a refusing proxy that records any attempt to reach the outside.
* :mod:`.netns`: a private network namespace with only loopback.
* :mod:`.cli`: where the real CLI is, and the private environment each process gets.
* :mod:`.chat_recording`: recorded runs through the real CLI, kept as fixtures (replayed and
  shown as a chat view by :mod:`tests.support.chat`).
* ``conftest.py``: the fixtures ``netns``, ``real_cli``, ``cli_command``, ``fake_api``, ``cli_env``.
"""
