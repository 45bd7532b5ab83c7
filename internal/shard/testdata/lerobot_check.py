"""Check a shard written by package shard against lerobot itself.

Usage: HF_HUB_OFFLINE=1 <conformance-venv>/bin/python shard/testdata/lerobot_check.py SHARD_DIR

Not run by `go test` (the Go tests must not need Python). It checks that
LeRobotDataset loads every item, that meta/info.json and meta/stats.json are
byte-identical to lerobot's own write_json of their content, that per-episode
stats match lerobot's compute_episode_stats on the same rows (min/max/count
exactly, mean/std to float32 rounding, quantiles within one histogram bin),
and that stats.json matches lerobot's aggregate_stats of the episode stats.
"""
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from lerobot.datasets.compute_stats import aggregate_stats, compute_episode_stats
from lerobot.datasets.lerobot_dataset import LeRobotDataset, LeRobotDatasetMetadata
from lerobot.datasets.utils import load_json, write_json

root = Path(sys.argv[1])
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


# Byte format of the JSON files: lerobot's write_json of the loaded content.
for name in ["info.json", "stats.json"]:
    path = root / "meta" / name
    with tempfile.TemporaryDirectory() as tmp:
        write_json(load_json(path), Path(tmp) / name)
        check((Path(tmp) / name).read_bytes() == path.read_bytes(), f"{name}: bytes differ from lerobot write_json")

meta = LeRobotDatasetMetadata("local/check", root=root)
ds = LeRobotDataset("local/check", root=root)
check(len(ds) == meta.total_frames, f"len {len(ds)} != total_frames {meta.total_frames}")
for i in range(len(ds)):
    item = ds[i]
    check(int(item["index"]) == i, f"item {i}: index {int(item['index'])}")
tasks = pd.read_parquet(root / "meta/tasks.parquet")
check(tasks.index.name == "task", f"tasks index name {tasks.index.name}")

features = meta.features
data = pd.concat([pd.read_parquet(p) for p in sorted((root / "data").glob("*/*.parquet"))])
eps = pd.read_parquet(sorted((root / "meta/episodes").glob("*/*.parquet"))[0])
ep_stats_list = []
for _, ep in eps.iterrows():
    rows = data[data["episode_index"] == ep["episode_index"]]
    buf = {}
    for key, ft in features.items():
        if ft["dtype"] in ("video", "image", "string"):
            continue
        col = rows[key].to_numpy()
        if ft["shape"] != (1,):
            col = np.stack(col)
        # lerobot 0.4.4 squares uint8 batches in uint8 (overflow, std 0); the
        # shard computes in float64 as newer lerobot does, so compare to that.
        buf[key] = col.astype(np.int64 if ft["dtype"] == "uint8" else ft["dtype"])
    # LeRobot's episode buffer holds timestamps as Python floats k/fps.
    buf["timestamp"] = rows["frame_index"].to_numpy() / meta.fps
    want = compute_episode_stats(buf, {k: features[k] for k in buf})
    ep_stats_list.append(want)
    for key, st in want.items():
        n = st["count"][0]
        for stat, wv in st.items():
            got = np.array(ep[f"stats/{key}/{stat}"].tolist(), dtype=np.float64)
            wv = np.asarray(wv, dtype=np.float64)
            where = f"episode {ep['episode_index']} {key}/{stat}"
            if stat in ("min", "max", "count"):
                check(np.array_equal(got, wv), f"{where}: {got} != {wv}")
            elif stat in ("mean", "std"):
                check(np.allclose(got, wv, rtol=1e-5, atol=1e-6), f"{where}: {got} != {wv}")
            else:
                binw = (np.asarray(st["max"], dtype=np.float64) - np.asarray(st["min"], dtype=np.float64) + 2e-10) / 5000
                check(np.all(np.abs(got - wv) <= binw + 1e-6), f"{where}: {got} vs {wv} (bin {binw})")

agg = aggregate_stats(ep_stats_list)
stats = load_json(root / "meta/stats.json")
for key, st in agg.items():
    for stat, wv in st.items():
        got = np.array(stats[key][stat], dtype=np.float64)
        wv = np.asarray(wv, dtype=np.float64)
        where = f"stats.json {key}/{stat}"
        if stat in ("min", "max", "count"):
            check(np.array_equal(got, wv), f"{where}: {got} != {wv}")
        else:
            check(np.allclose(got, wv, rtol=1e-4, atol=1e-4), f"{where}: {got} != {wv}")

for f in failures:
    print("FAIL", f)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
