"""Tests of setup.sh's refusal to build a venv on a disk too full for it
(no LeRobot needed): run.sh runs them with test_check.py."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

SETUP = Path(__file__).resolve().parent / "setup.sh"


class FreeDiskTest(unittest.TestCase):
    def test_refuses_before_downloading(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            venv = Path(tmp) / "parent" / "venv"
            env = dict(os.environ, CONFORMANCE_VENV=str(venv),
                       CONFORMANCE_VENV_FREE_MB=str(1 << 40), TMPDIR=tmp)
            run = subprocess.run(["bash", str(SETUP)], env=env, capture_output=True,
                                 text=True, timeout=60)
            self.assertEqual(run.returncode, 1, run.stderr)
            m = re.search(r"conformance venv: (\S+) has (\d+) MB free; building the venv "
                          r"needs about (\d+) MB there", run.stderr)
            self.assertIsNotNone(m, run.stderr)
            self.assertEqual(m.group(1), str(venv.parent))
            self.assertEqual(int(m.group(3)), 1 << 40)
            self.assertIn("CONFORMANCE_VENV_FREE_MB", run.stderr)
            # Refused before the venv was made or pip ran.
            self.assertFalse(venv.exists(), "setup.sh made the venv it refused")
            self.assertEqual(run.stdout, "", "setup.sh printed a python path after refusing")


if __name__ == "__main__":
    unittest.main()
