"""doctor.py runs lerobot-doctor (a dataset linter on PyPI) with --ci on
every shard and holds its verdicts to two rules:

  - no FAIL, except "Training Readiness: No action features found" on a
    shard without an action feature (an export without a feature profile:
    it has no action to train on, and says so);
  - every check that WARNs is explained in FINDINGS.md, as a bullet
    "- **<check name>**: why" under the heading "## lerobot-doctor".

  python doctor.py --doctor PATH/lerobot-doctor --findings FINDINGS.md SHARD ...

Exit status: 0 passed; 1 a rule was broken or the doctor did not run.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

NO_ACTION = "No action features found"


def explained_checks(findings: Path) -> set[str]:
    """explained_checks are the check names FINDINGS.md explains."""
    text = findings.read_text()
    m = re.search(r"^## lerobot-doctor.*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return set(re.findall(r"^- \*\*(.+?)\*\*", m.group(1), re.M)) if m else set()


def doctor(exe: str, shard: Path) -> dict:
    p = subprocess.run([exe, "check", str(shard), "--ci"], capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"exit {p.returncode}, no JSON report: {(p.stdout + p.stderr)[-600:]}") from None


def judge(shard: Path, report: dict, explained: set[str]) -> tuple[list[str], list[str]]:
    """judge returns (problems, notes) for one report."""
    info = json.loads((shard / "meta/info.json").read_text())
    has_action = any(k.startswith("action") for k in info["features"])
    problems, notes = [], []
    for check in report["checks"]:
        name, sev = check["name"], check["severity"]
        msgs = [m["message"] for m in check["messages"] if m["severity"] == sev]
        if sev == "FAIL":
            if not has_action and name == "Training Readiness" and all(NO_ACTION in m for m in msgs):
                notes.append(f"{name}: FAIL accepted, no action feature (export without a profile)")
            else:
                problems.append(f"{name}: FAIL: {'; '.join(msgs)[:400]}")
        elif sev == "WARN":
            if name in explained:
                notes.append(f"{name}: WARN (explained in FINDINGS.md): {msgs[0][:120] if msgs else ''}")
            else:
                problems.append(f"{name}: WARN not explained in FINDINGS.md: {'; '.join(msgs)[:400]}")
    return problems, notes


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("shards", nargs="+", type=Path)
    ap.add_argument("--doctor", required=True, help="the lerobot-doctor executable")
    ap.add_argument("--findings", type=Path, required=True)
    a = ap.parse_args(argv)
    explained = explained_checks(a.findings)
    t0 = time.monotonic()
    bad = 0
    for shard in a.shards:
        report = None
        try:
            report = doctor(a.doctor, shard)
            problems, notes = judge(shard, report, explained)
        except Exception as e:  # noqa: BLE001 - a doctor that cannot run is a failure
            problems, notes = [f"{type(e).__name__}: {e}"], []
        checks = report["checks"] if report else []
        counts = {s: sum(c["severity"] == s for c in checks) for s in ("PASS", "WARN", "FAIL")}
        for n in notes:
            print(f"note doctor {shard.name}: {n}")
        for p in problems:
            print(f"FAIL doctor {shard.name}: {p}")
        print(f"{'ok  ' if not problems else 'FAIL'} doctor {shard.name}: "
              f"{counts['PASS']} pass, {counts['WARN']} warn, {counts['FAIL']} fail", flush=True)
        bad += bool(problems)
    print(f"doctor: {len(a.shards)} shard(s), {bad} with problems, {time.monotonic() - t0:.1f}s: "
          f"{'PASS' if not bad else 'FAIL'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
