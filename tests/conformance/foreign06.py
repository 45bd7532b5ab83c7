"""foreign06.py proves that `ceres-export merge` takes LeRobot datasets it
did not write as sources: a dataset LeRobot 0.6's own writer
made (merge06.py's twin) and a shard that lerobot-edit-dataset rewrote
without its ceres/ directory (edit06.py's delete), beside a shard of ours.

  python foreign06.py --ceres-export BIN --workdir DIR SOURCE...

It
  1. merges the SOURCEs in order with `ceres-export merge`;
  2. requires `ceres-export verify` to find the result sound, its merge
     report to mark exactly the foreign sources foreign, and every one of
     their episodes to have null ceres/* columns;
  3. reads every frame of the merged dataset and of each source through
     LeRobotDataset and requires, frame by frame, the same values and
     decoded pixels (merge06.compare_to_sources), index and episode_index
     shifted by the sources before it.

Exit status: 0 passed; 1 a check failed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import merge06  # noqa: E402  (compare_to_sources)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("sources", nargs="+", type=Path)
    ap.add_argument("--ceres-export", required=True)
    ap.add_argument("--workdir", type=Path, required=True)
    a = ap.parse_args(argv)
    a.workdir.mkdir(parents=True, exist_ok=True)
    sources = [s.resolve() for s in a.sources]
    out = a.workdir / "merged"
    where = f"foreign06 {'+'.join(s.name for s in sources)}"
    t0 = time.monotonic()
    problems: list[str] = []
    r = subprocess.run([a.ceres_export, "merge", *map(str, sources), "-o", str(out), "--replace"], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL {where}: ceres-export merge: exit {r.returncode}: {r.stderr[-1500:]}", flush=True)
        return 1
    v = subprocess.run([a.ceres_export, "verify", str(out), "--json"], capture_output=True, text=True)
    res = json.loads(v.stdout or "{}")
    if v.returncode != 0 or not res.get("sound"):
        problems.append(f"{where}: ceres-export verify: exit {v.returncode}: "
                        + "; ".join(f"{f['file']}: {f['code']}: {f['message']}" for f in res.get("findings", [])[:5]))
    report = json.loads((out / "ceres/merge-report.json").read_text())
    foreign = [not (s / "ceres").is_dir() for s in sources]
    marked = [s.get("foreign") is not None for s in report["sources"]]
    if marked != foreign:
        problems.append(f"{where}: merge report marks foreign {marked}, want {foreign}")
    import pyarrow.parquet as pq
    eps = pq.read_table(out / "meta/episodes/chunk-000/file-000.parquet",
                        columns=["episode_index", "ceres/session_id", "ceres/source/index"]).to_pylist()
    for e in eps:
        if (e["ceres/session_id"] is None) != foreign[e["ceres/source/index"]]:
            problems.append(f"{where}: episode {e['episode_index']}: session {e['ceres/session_id']!r}, "
                            f"source {e['ceres/source/index']} foreign {foreign[e['ceres/source/index']]}")
    try:
        problems += merge06.compare_to_sources(out, "local/ceres-merged", sources, where)[0]
    except Exception as e:  # noqa: BLE001 - any LeRobot exception is a finding
        problems.append(f"{where}: {type(e).__name__}: {str(e)[:800]}")
    for p in problems:
        print("FAIL " + p, flush=True)
    if not problems:
        n = sum(1 for f in foreign if f)
        print(f"ok   {where}: ceres-export merged {len(sources)} sources ({n} foreign) into a sound dataset; "
              f"LeRobot reads every frame equal to its source's ({len(eps)} episodes, {time.monotonic() - t0:.1f}s)", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
