"""Unit tests of check.py's own helpers (no LeRobot needed): run.sh runs them
before the conformance matrix, and `python3 -m unittest discover -s
tests/conformance` runs them anywhere."""

from __future__ import annotations

import contextlib
import io
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check  # noqa: E402


class TraceTest(unittest.TestCase):
    def raise_and_trace(self, verbose: bool) -> str:
        err = io.StringIO()
        old = check.VERBOSE
        check.VERBOSE = verbose
        try:
            with contextlib.redirect_stderr(err):
                try:
                    raise ValueError("loader said no")
                except ValueError:
                    check.trace()
        finally:
            check.VERBOSE = old
        return err.getvalue()

    def test_verbose_prints_the_traceback(self) -> None:
        out = self.raise_and_trace(True)
        self.assertIn("Traceback (most recent call last)", out)
        self.assertIn("ValueError: loader said no", out)
        self.assertIn("raise_and_trace", out)

    def test_quiet_prints_nothing(self) -> None:
        self.assertEqual(self.raise_and_trace(False), "")


if __name__ == "__main__":
    unittest.main()
