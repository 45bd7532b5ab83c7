"""edit06.py runs LeRobot 0.6's lerobot-edit-dataset on one of our shards:
info, delete_episodes, split and modify_tasks, each through the command line
a user types, and checks each result with LeRobotDataset:

  - info: exits 0 and reports the shard's episode and frame totals;
  - delete_episodes [0, 2]: the other episodes remain, renumbered, their rows
    equal to the source's (videos are re-encoded by LeRobot from the encoder
    settings in our info.json, so pixels are only close, see compare_episode);
  - split {"train": [..], "val": [..]}: both parts hold their episodes' rows;
  - modify_tasks new_task: every frame carries the new task.

  python edit06.py --workdir DIR SHARD

Exit status: 0 passed; 1 a check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

INDEX_KEYS = ("index", "episode_index", "task_index")
# Mean |diff| allowed for a frame LeRobot decoded and encoded again (AV1 or
# H.264 at our CRF 30 on 160x120 test pictures: about 4-9/255 measured).
PIXEL_TOLERANCE = 16 / 255
# Mean |diff| under which two of the source's decoded frames are one picture
# repeated (0.00-1.05/255 measured for a gap-filled frame; distinct
# neighbouring frames of the test pictures differ by 6/255 and more).
SAME_PICTURE = 2 / 255


def edit(args: list[str], log: Path) -> tuple[int, str]:
    """edit runs lerobot-edit-dataset (beside this Python) with args."""
    exe = Path(sys.executable).with_name("lerobot-edit-dataset")
    p = subprocess.run([str(exe), *args], capture_output=True, text=True)
    log.write_text(p.stdout + p.stderr)
    return p.returncode, p.stdout + p.stderr


def episodes_of(root: Path, repo_id: str):
    """episodes_of returns the dataset's metadata and, per episode, its data
    rows (every column, read with pyarrow) and the LeRobotDataset items
    (pyav) of its first, second and last frames: {episode: (rows, {frame: item})}.
    Sampled items keep the check within CI's time (LeRobot reopens the video
    for every item)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset(repo_id, root=root, video_backend="pyav")
    table = pa.concat_tables([pq.read_table(f) for f in sorted((root / "data").glob("*/*.parquet"))])
    rows = table.to_pylist()
    out: dict[int, tuple[list, dict]] = {}
    for r in rows:
        out.setdefault(r["episode_index"], ([], {}))[0].append(r)
    for e, (ep_rows, items) in out.items():
        start = ep_rows[0]["index"]
        for f in sorted({0, 1, len(ep_rows) - 1}):
            items[f] = ds[start + f]
    return ds.meta, out


def compare_episode(where: str, got, want, video_keys: list[str]) -> list[str]:
    """compare_episode: the same rows (all but the index columns) and, at the
    sampled frames, the same item values; video frames re-encoded by LeRobot
    must be close, and closer to their own source frame than to any sampled
    neighbour showing a different picture (so that no frame shifted)."""
    import torch

    (g_rows, g_items), (w_rows, w_items) = got, want
    if len(g_rows) != len(w_rows):
        return [f"{where}: {len(g_rows)} frames, source {len(w_rows)}"]
    for f, (g, w) in enumerate(zip(g_rows, w_rows)):
        for k, v in w.items():
            if k not in INDEX_KEYS and g.get(k) != v:
                return [f"{where} row {f} {k}: {g.get(k)!r}, source {v!r}"]
    for f, w in w_items.items():
        g = g_items[f]
        for k, v in w.items():
            if k in INDEX_KEYS or k.endswith("_is_pad") or k == "task":
                continue
            if k in video_keys:
                d = float((g[k] - v).abs().mean())
                # A neighbour showing the same source picture (a camera gap
                # filled by repeating a frame) cannot tell a shift apart.
                near = [float((g[k] - w_items[n][k]).abs().mean()) for n in w_items
                        if n != f and float((v - w_items[n][k]).abs().mean()) > SAME_PICTURE]
                if d > PIXEL_TOLERANCE or any(x <= d for x in near):
                    return [f"{where} frame {f} {k}: mean |diff| {d * 255:.2f}/255 after re-encoding, "
                            f"to other frames {[round(x * 255, 2) for x in near]}"]
            elif not (isinstance(v, torch.Tensor) and g[k].dtype == v.dtype and torch.equal(g[k], v)):
                return [f"{where} frame {f} {k}: {g[k]!r}, source {v!r}"]
    return []


def check_kept(name: str, out: Path, repo_id: str, src: dict, kept: list[int], video_keys) -> list[str]:
    """The edited dataset at out holds the source episodes kept, renumbered 0.."""
    meta, eps = episodes_of(out, repo_id)
    if sorted(eps) != list(range(len(kept))):
        return [f"{name}: episodes {sorted(eps)}, want 0..{len(kept) - 1} (source episodes {kept})"]
    problems = []
    for new, old in enumerate(kept):
        problems += compare_episode(f"{name} episode {new} (source {old})", eps[new], src[old], video_keys)
        if eps[new][1][0]["task"] != src[old][1][0]["task"]:
            problems.append(f"{name} episode {new}: task {eps[new][1][0]['task']!r}, "
                            f"source {src[old][1][0]['task']!r}")
    if not problems:
        print(f"ok   {name}: {len(kept)} episodes, {meta.total_frames} frames, rows equal to the source's, "
              "sampled frames read back", flush=True)
    return problems


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("shard", type=Path)
    ap.add_argument("--workdir", type=Path, required=True)
    a = ap.parse_args(argv)
    shard, w = a.shard.resolve(), a.workdir.resolve()
    shutil.rmtree(w, ignore_errors=True)
    w.mkdir(parents=True)
    rid = f"local/{shard.name}"
    t0 = time.monotonic()
    problems: list[str] = []
    try:
        meta, src = episodes_of(shard, rid)
        video_keys = list(meta.video_keys)
        n = meta.total_episodes

        rc, out = edit(["--repo_id", rid, "--root", str(shard), "--operation.type", "info",
                        "--operation.show_features", "true"], w / "info.log")
        if rc != 0 or str(meta.total_frames) not in out or str(n) not in out:
            problems.append(f"info: exit {rc}, totals {n} episodes/{meta.total_frames} frames not in its output")
        else:
            print(f"ok   info: exit 0, reports {n} episodes and {meta.total_frames} frames", flush=True)

        drop = [0, 2]
        rc, out = edit(["--repo_id", rid, "--root", str(shard), "--new_repo_id", "local/deleted",
                        "--new_root", str(w / "deleted"), "--operation.type", "delete_episodes",
                        "--operation.episode_indices", json.dumps(drop)], w / "delete.log")
        if rc != 0:
            problems.append(f"delete_episodes: exit {rc}: {out[-600:]}")
        else:
            problems += check_kept("delete_episodes [0, 2]", w / "deleted", "local/deleted", src,
                                   [e for e in range(n) if e not in drop], video_keys)

        splits = {"train": list(range(0, n - 2)), "val": [n - 2, n - 1]}
        rc, out = edit(["--repo_id", rid, "--root", str(shard), "--new_root", str(w / "split"),
                        "--operation.type", "split", "--operation.splits", json.dumps(splits)], w / "split.log")
        if rc != 0:
            problems.append(f"split: exit {rc}: {out[-600:]}")
        else:
            for part, kept in splits.items():
                problems += check_kept(f"split {part}", w / "split" / part, f"{rid}_{part}", src, kept, video_keys)

        copy = w / "modify-tasks"
        shutil.copytree(shard, copy)
        # No ": " in it: the command line parses values as YAML (draccus), and
        # "a: b" would arrive as a mapping.
        new_task = "edited - move the probe"
        rc, out = edit(["--repo_id", "local/modify-tasks", "--root", str(copy), "--operation.type", "modify_tasks",
                        "--operation.new_task", new_task], w / "modify-tasks.log")
        if rc != 0:
            problems.append(f"modify_tasks: exit {rc}: {out[-600:]}")
        else:
            meta2, eps2 = episodes_of(copy, "local/modify-tasks")
            tasks = sorted({it["task"] for _, items in eps2.values() for it in items.values()})
            if tasks != [new_task] or list(meta2.tasks.index) != [new_task]:
                problems.append(f"modify_tasks: frame tasks {tasks}, tasks.parquet {list(meta2.tasks.index)}")
            else:
                problems += [p for e in range(n) for p in
                             compare_episode(f"modify_tasks episode {e}", eps2[e], src[e], video_keys)]
                if not problems:
                    print(f"ok   modify_tasks: all {meta2.total_frames} frames carry {new_task!r}", flush=True)
    except Exception as e:  # noqa: BLE001 - any LeRobot exception is a finding
        problems.append(f"{type(e).__name__}: {str(e)[:800]}")
    for p in problems:
        print(f"FAIL edit06 {shard.name}: {p}", flush=True)
    print(f"edit06: {'PASS' if not problems else 'FAIL'} ({time.monotonic() - t0:.1f}s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
