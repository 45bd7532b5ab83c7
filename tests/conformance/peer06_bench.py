"""peer06_bench.py times LeRobot 0.6's own writer on the episodes of one of
our shards, for the export benchmark (cmd/ceres-export BenchmarkPeerLeRobot06).

It decodes the shard's videos and reads its data rows into memory first (not
timed: the peer starts from frames already decoded, as a recorder holding
camera frames would), then, for each mode, times LeRobotDataset.create,
add_frame for every frame, save_episode per episode and finalize, with the
shard's encoder settings (codec, CRF, GOP, preset from its info.json):
  default    create()'s defaults: frames go to PNG files, each episode is
             encoded from them in save_episode;
  streaming  streaming_encoding=True: frames are encoded while they are added.
It prints one JSON object: {"frames": N, "cameras": C, "default_s": ..., "streaming_s": ...}.

  python peer06_bench.py --shard SHARD --workdir DIR [--modes default,streaming]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

DEFAULT_KEYS = ("timestamp", "frame_index", "episode_index", "index", "task_index")


def load(shard: Path):
    """load returns (info, features, episodes): episodes is a list of
    (task, [frame dict, ...]) with numpy values and HWC uint8 pictures."""
    import av
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    info = json.loads((shard / "meta/info.json").read_text())
    feats = {k: {"dtype": v["dtype"], "shape": tuple(v["shape"]), "names": v["names"]}
             for k, v in info["features"].items() if k not in DEFAULT_KEYS}
    videos = [k for k, v in feats.items() if v["dtype"] == "video"]
    pictures = {}
    for k in videos:
        files = sorted((shard / "videos" / k).glob("*/*.mp4"))
        pictures[k] = [f.to_ndarray(format="rgb24") for p in files for f in av.open(str(p)).decode(video=0)]
    rows = pa.concat_tables([pq.read_table(f) for f in sorted((shard / "data").glob("*/*.parquet"))]).to_pylist()
    tasks = pd.read_parquet(shard / "meta/tasks.parquet")
    task_of = {int(i): t for t, i in zip(tasks.index, tasks["task_index"])}
    episodes: list[tuple[str, list]] = []
    for r in rows:
        if r["frame_index"] == 0:
            episodes.append((task_of[r["task_index"]], []))
        frame = {}
        for k, f in feats.items():
            if f["dtype"] == "video":
                frame[k] = pictures[k][r["index"]]
            else:
                frame[k] = np.asarray(r[k], dtype=f["dtype"]).reshape(f["shape"])
        episodes[-1][1].append(frame)
    return info, feats, episodes


def write(info: dict, feats: dict, episodes: list, root: Path, streaming: bool) -> float:
    """write times LeRobot's writer on the episodes; returns seconds."""
    from lerobot.configs.video import RGBEncoderConfig
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    vinfo = next(v["info"] for v in info["features"].values() if v["dtype"] == "video")
    codec = {"av1": "libsvtav1"}.get(vinfo["video.codec"], vinfo["video.codec"])
    enc = RGBEncoderConfig(vcodec=codec, g=vinfo["video.g"], crf=vinfo["video.crf"], preset=vinfo["video.preset"])
    shutil.rmtree(root, ignore_errors=True)
    t0 = time.perf_counter()
    ds = LeRobotDataset.create("bench/peer", fps=info["fps"], features=feats, root=root,
                               robot_type=info.get("robot_type"), rgb_encoder=enc, streaming_encoding=streaming)
    for task, frames in episodes:
        for fr in frames:
            ds.add_frame({**fr, "task": task})
        ds.save_episode()
    ds.finalize()
    took = time.perf_counter() - t0
    frames = sum(len(f) for _, f in episodes)
    got = json.loads((root / "meta/info.json").read_text())["total_frames"]
    if got != frames:
        raise SystemExit(f"peer wrote {got} frames, want {frames}")
    return took


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shard", type=Path, required=True)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--modes", default="default,streaming")
    a = ap.parse_args(argv)
    info, feats, episodes = load(a.shard)
    out = {"frames": sum(len(f) for _, f in episodes), "episodes": len(episodes),
           "cameras": sum(f["dtype"] == "video" for f in feats.values())}
    for mode in a.modes.split(","):
        out[f"{mode}_s"] = write(info, feats, episodes, a.workdir / mode, streaming=(mode == "streaming"))
        shutil.rmtree(a.workdir / mode, ignore_errors=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
