"""``claude_agent_sdk`` bound to ``claudecode.sdk``: put this directory first on
``PYTHONPATH`` and the SDK's own programs run on the drop-in, unchanged.

The one private module a vendored test imports (``_internal.session_resume``, for
``_write_redacted_credentials``) is bound to the drop-in's port of it.
"""

import sys
import types

import claudecode.sdk
import claudecode.sdk._sessions.resume
import claudecode.sdk.types

_internal = types.ModuleType(__name__ + "._internal")
_internal.session_resume = claudecode.sdk._sessions.resume  # type: ignore[attr-defined]

sys.modules[__name__] = claudecode.sdk
sys.modules[__name__ + ".types"] = claudecode.sdk.types
sys.modules[__name__ + "._internal"] = _internal
sys.modules[__name__ + "._internal.session_resume"] = claudecode.sdk._sessions.resume
