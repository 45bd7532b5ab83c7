"""merge_check.py: the real client against `ceres-export merge`.

Given shards exported by ceres-export and the dataset `ceres-export merge`
made of them, it

1. has LeRobot's loader read the merged dataset fully (check.py's
   check_shard: metadata, every frame with each available backend, delta
   windows across episode borders);
2. merges the same shards with LeRobot's own aggregate_datasets;
3. compares the two as LeRobot loads them: episodes (index, tasks, length,
   rows), the tasks table, every item (every data value and every decoded
   video frame, exactly), and meta/stats.json (min, max, mean, std, count
   and quantiles of every feature but the bookkeeping columns, whose
   statistics lerobot 0.4.4's merge does not shift: reported, and ours are
   checked against the rows instead).

Usage: merge_check.py --merged DIR --workdir DIR SHARD...
Prints one "merge-check summary: ...: PASS|FAIL" line; exit 1 on failure.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check  # noqa: E402  (check.py's Report, check_shard, make_expectations)

# Columns LeRobot regenerates on a merge; lerobot 0.4.4 leaves their
# per-dataset statistics unshifted (see FINDINGS.md), so they are compared
# with the rows rather than with LeRobot's merge.
BOOKKEEPING = ("index", "episode_index", "task_index")


def episodes_table(root: Path) -> list[dict]:
    import pyarrow.parquet as pq
    cols = ["episode_index", "tasks", "length", "dataset_from_index", "dataset_to_index"]
    return [r for f in sorted((root / "meta/episodes").glob("*/*.parquet"))
            for r in pq.read_table(f, columns=cols).to_pylist()]


def close(a, b, rel=1e-9, abs_=1e-12) -> bool:
    import numpy as np
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= abs_ + rel * np.abs(b)))


def compare_stats(rep: check.Report, ours: Path, theirs: Path, total_frames: int, total_episodes: int) -> None:
    import numpy as np
    where = "merge stats.json"
    a = json.loads((ours / "meta/stats.json").read_text())
    b = json.loads((theirs / "meta/stats.json").read_text())
    if sorted(a) != sorted(b):
        rep.fail(where, f"features {sorted(a)} vs LeRobot's {sorted(b)}")
        return
    compared = 0
    for feat in sorted(a):
        if feat in BOOKKEEPING:
            continue
        for stat in sorted(set(a[feat]) | set(b[feat])):
            if stat not in a[feat] or stat not in b[feat]:
                rep.fail(where, f"{feat}.{stat} present in only one")
                continue
            if not close(a[feat][stat], b[feat][stat]):
                rep.fail(where, f"{feat}.{stat}: ours {a[feat][stat]} vs LeRobot's {b[feat][stat]}")
            compared += 1
    # Ours for the bookkeeping columns follow the merged rows.
    want = {
        "index": (0, total_frames - 1, (total_frames - 1) / 2),
        "episode_index": (0, total_episodes - 1, None),
    }
    for feat, (lo, hi, mean) in want.items():
        s = a.get(feat, {})
        if s.get("min") != [lo] or s.get("max") != [hi] or (mean is not None and not close(s.get("mean"), [mean])):
            rep.fail(where, f"our {feat} stats {s.get('min')}..{s.get('max')} mean {s.get('mean')}, want {lo}..{hi} mean {mean}")
        if b.get(feat, {}).get("max") != [hi]:
            rep.note(where, f"LeRobot's merge leaves {feat} max at {b.get(feat, {}).get('max')} (rows go to {hi})")
    if compared:
        rep.ok(where, f"{compared} statistics equal to LeRobot's merge (rel 1e-9); bookkeeping columns follow the rows")
    del np


def compare_items(rep: check.Report, ours: Path, theirs: Path, backend: str) -> int:
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    where = f"merge items[{backend}]"
    t0 = time.monotonic()
    a = LeRobotDataset("local/ceres-merged", root=ours, video_backend=backend)
    b = LeRobotDataset("local/lerobot-merged", root=theirs, video_backend=backend)
    if len(a) != len(b) or a.num_episodes != b.num_episodes:
        rep.fail(where, f"{len(a)} items / {a.num_episodes} episodes vs LeRobot's {len(b)} / {b.num_episodes}")
        return 0
    la = torch.utils.data.DataLoader(a, batch_size=32, shuffle=False, num_workers=0)
    lb = torch.utils.data.DataLoader(b, batch_size=32, shuffle=False, num_workers=0)
    n = bad = 0
    for ba, bb in zip(la, lb):
        if sorted(ba) != sorted(bb):
            rep.fail(where, f"items {n}..: keys {sorted(ba)} vs {sorted(bb)}")
            return n
        for k in sorted(ba):
            x, y = ba[k], bb[k]
            same = torch.equal(x, y) if torch.is_tensor(x) else x == y
            if not same:
                diff = float((x.to(torch.float64) - y.to(torch.float64)).abs().max()) if torch.is_tensor(x) else None
                rep.fail(where, f"items {n}..{n + len(ba['index']) - 1}: {k} differs (max |diff| {diff})")
                bad += 1
        n += len(ba["index"])
        if bad > 5:
            rep.fail(where, "too many differences, stopping")
            break
    if not bad:
        rep.ok(where, f"{n} items equal to LeRobot's merge, every key and every decoded frame exactly, "
                      f"{len(a.meta.video_keys)} camera(s), {time.monotonic() - t0:.1f}s")
    return n


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("shards", nargs="+", type=Path)
    ap.add_argument("--merged", type=Path, required=True, help="the dataset ceres-export merge made of the shards")
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--backends", choices=["auto", "pyav", "torchcodec"], default="auto")
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    rep = check.Report()
    shards = [s.resolve() for s in a.shards]
    ours = a.merged.resolve()
    a.workdir.mkdir(parents=True, exist_ok=True)

    # 1. LeRobot's loader reads ours fully.
    exps = []
    for s in shards:
        exp, problems = check.make_expectations(s, None)
        for p in problems:
            rep.fail(f"expectations {s.name}", p)
        exps.append(exp)
    expect = {
        "repo_id": "local/ceres-merged",
        "total_episodes": sum(e["total_episodes"] for e in exps),
        "total_frames": sum(e["total_frames"] for e in exps),
        "fps": exps[0]["fps"],
        "features": exps[0]["features"],
        "tasks": sorted({t for e in exps for t in e["tasks"]}),
        "video_keys": exps[0]["video_keys"],
        "episode_lengths": [n for e in exps for n in e["episode_lengths"]],
        "tasks_index_name": "task",
    }
    backends = check.choose_backends(rep, [ours], a.backends)
    print(f"== merged by ceres-export ({ours})", flush=True)
    check.check_shard(rep, "ceres-merged", ours, expect, backends)

    # 2. LeRobot's own merge of the same shards.
    from lerobot.datasets.aggregate import aggregate_datasets
    theirs = a.workdir / "lerobot-merged"
    if theirs.exists():
        shutil.rmtree(theirs)
    print("== merged by LeRobot's aggregate_datasets", flush=True)
    t1 = time.monotonic()
    try:
        aggregate_datasets([f"local/{s.name}" for s in shards], "local/lerobot-merged", roots=shards, aggr_root=theirs)
    except Exception as e:  # noqa: BLE001
        rep.fail("aggregate_datasets", f"{type(e).__name__}: {str(e)[:600]}")
        check.trace()
        theirs = None
    if theirs is not None:
        rep.ok("aggregate_datasets", f"{len(shards)} shards in {time.monotonic() - t1:.1f}s")

    # 3. The same content.
    if theirs is not None:
        ea, eb = episodes_table(ours), episodes_table(theirs)
        check.expect_equal(rep, "merge episodes", "episode rows (index, tasks, length, rows)", ea, eb)
        from lerobot.datasets.lerobot_dataset import LeRobotDatasetMetadata
        ma = LeRobotDatasetMetadata("local/ceres-merged", root=ours)
        mb = LeRobotDatasetMetadata("local/lerobot-merged", root=theirs)
        ta = list(ma.tasks.index), list(ma.tasks["task_index"])
        tb = list(mb.tasks.index), list(mb.tasks["task_index"])
        if check.expect_equal(rep, "merge tasks", "tasks table (strings, task_index)", ta, tb):
            rep.ok("merge tasks", f"{len(ta[0])} tasks in the same order")
        try:
            # pyav: measured faster than torchcodec for LeRobot's per-item reads here.
            rep.frames_read += compare_items(rep, ours, theirs, "pyav")
        except Exception as e:  # noqa: BLE001
            rep.fail("merge items", f"{type(e).__name__}: {str(e)[:600]}")
            check.trace()
        compare_stats(rep, ours, theirs, expect["total_frames"], expect["total_episodes"])

    status = "PASS" if not rep.failures else f"FAIL ({len(rep.failures)} failure(s))"
    print(f"merge-check summary: {len(shards)} shard(s), {expect['total_episodes']} episodes, "
          f"{rep.frames_read} frames read, backends {'+'.join(backends)}, {time.monotonic() - t0:.1f}s: {status}")
    for line in rep.failures:
        print("  " + line)
    return 0 if not rep.failures else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
