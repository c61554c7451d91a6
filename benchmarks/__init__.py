"""Benchmarks: throughput, latency, memory and scale of the bridge.

Run them with ``python -m benchmarks`` (``--quick`` for a ~30 s smoke run; ``--help`` for the
rest). Nothing here is imported by the library or asserted by the test suite; the figures
are written as JSON and Markdown under ``benchmarks/results/`` and, with ``--update-md``,
into ``BENCHMARKS.md``.

Modules: :mod:`.corpus` (the deterministic stream-json corpus), :mod:`.emitter` (a tiny
fake CLI that writes it as fast as the pipe takes it), :mod:`.throughput` (figures (a)-(f)),
:mod:`.latency`, :mod:`.memory`, :mod:`.scale`, :mod:`.report` (tables), :mod:`.procfs`
(processes as Linux ``/proc`` shows them: children, CPU time, zombies; the tests use it too).
"""
