"""What the tests share: wait helpers, the hang guard, config builders.

Tests import from the modules here (``tests.support.waits``, ``tests.support.timeouts``,
``tests.support.configs``), never from another test module; a helper that only one test
folder uses may stay in that folder's non-test module (e.g. ``tests/cluster/_support.py``).
"""
