"""``python -m svmrepro``: ``svmrepro-run`` (:mod:`svmrepro.app`), with its stop line in place before its imports, as the
console script has it: run as ``-m svmrepro``, :mod:`svmrepro.app` is imported under its own name, not as the entry
point, and a Ctrl-C during its imports would be Python's ``KeyboardInterrupt`` where it lands (swallowed in a
finalizer, the command ran on)."""

from svmrepro.stop_line import one_line_stop

one_line_stop("svmrepro-run", __name__)

from svmrepro.app import main  # noqa: E402  (after the stop line, on purpose)

main()
