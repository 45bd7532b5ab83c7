"""merge06.py proves that LeRobot 0.6's aggregate_datasets joins our shards
with each other and with a dataset LeRobot's own writer produced, and that
the merged dataset holds exactly the sources' values.

  python merge06.py --workdir DIR SHARD_A SHARD_B [SHARD ...]

The shards must have the same features (two exports of sessions with the same
streams and encoder settings). For them it
  1. writes a "twin" with LeRobot's writer (LeRobotDataset.create, add_frame,
     save_episode, finalize): the first shard's features, fps, robot_type and
     encoder settings, values of every dtype computed by twin_value();
  2. merges SHARD_A, SHARD_B, ..., twin with aggregate_datasets;
  3. reads every frame of the merged dataset and of each source through
     LeRobotDataset and requires, frame by frame, the same values (same torch
     dtype, exact), the same decoded pixels, the same task string, and
     index/episode_index shifted by the sources before it; and the merged
     data files hold the sources' rows with their Arrow value types. The
     twin's data files must hold the values it was given.

Exit status: 0 passed; 1 a check failed.
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

import numpy as np  # noqa: E402

DEFAULT_KEYS = ("timestamp", "frame_index", "episode_index", "index", "task_index")
# The twin's episodes: (length, task). A task of its own and one it shares
# with no shard, so the merge has to unify task tables.
TWIN_EPISODES = [(9, "twin: lift the probe"), (6, "twin: lower the probe")]
NUMPY = {"bool": np.bool_, "uint8": np.uint8, "int32": np.int32, "int64": np.int64,
         "float32": np.float32, "float64": np.float64}


def twin_value(dtype: str, shape: tuple, frame: int) -> np.ndarray:
    """twin_value is frame's value of a feature: large int64s and float64s
    with more than float32's precision, so that any narrowing shows."""
    n = int(np.prod(shape))
    k = np.arange(n) + frame * n
    if dtype == "bool":
        v = (k % 3) == 0
    elif dtype == "uint8":
        v = (k * 7) % 256
    elif dtype == "int32":
        v = k * -100003
    elif dtype == "int64":
        v = (1 << 61) + k
    elif dtype == "float64":
        v = 1e9 + k / 7
    else:
        v = k / 8 - 0.5
    return np.asarray(v, dtype=NUMPY[dtype]).reshape(shape)


def twin_image(shape: tuple, frame: int) -> np.ndarray:
    h, w, c = shape
    img = np.zeros((h, w, c), dtype=np.uint8)
    img[..., 0] = (11 * frame) % 256
    img[..., 1] = np.arange(w, dtype=np.uint8)[None, :]
    img[..., 2] = 200
    x = (3 * frame) % w
    img[:, x:x + 3, :] = 255
    return img


def encoder_for(info: dict) -> dict:
    """encoder_for is the create() keyword of the shard's video encoder
    (codec, GOP, CRF, preset), so that the twin's video info matches."""
    from lerobot.configs.video import RGBEncoderConfig

    codec = {"av1": "libsvtav1"}.get(info["video.codec"], info["video.codec"])
    return {"rgb_encoder": RGBEncoderConfig(vcodec=codec, g=info.get("video.g"), crf=info.get("video.crf"),
                                            preset=info.get("video.preset"))}


def write_twin(shard: Path, out: Path) -> dict:
    """write_twin writes the twin of shard at out and returns {frame: values}
    of its non-video features, as given to add_frame."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    info = json.loads((shard / "meta/info.json").read_text())
    feats = {k: {"dtype": v["dtype"], "shape": tuple(v["shape"]), "names": v["names"]}
             for k, v in info["features"].items() if k not in DEFAULT_KEYS}
    videos = [k for k, v in feats.items() if v["dtype"] == "video"]
    kwargs = encoder_for(info["features"][videos[0]]["info"]) if videos else {}
    ds = LeRobotDataset.create("local/twin", fps=info["fps"], features=feats, root=out,
                               robot_type=info.get("robot_type"), use_videos=bool(videos), **kwargs)
    given = {}
    n = 0
    for length, task in TWIN_EPISODES:
        for _ in range(length):
            frame = {"task": task}
            for k, f in feats.items():
                if f["dtype"] == "video":
                    frame[k] = twin_image(f["shape"], n)
                else:
                    frame[k] = twin_value(f["dtype"], f["shape"], n)
            given[n] = {k: v for k, v in frame.items() if k != "task" and k not in videos}
            ds.add_frame(frame)
            n += 1
        ds.save_episode()
    ds.finalize()
    return given


def items(root: Path, repo_id: str) -> list[dict]:
    """items reads every frame of a dataset through LeRobotDataset (pyav)."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset(repo_id, root=root, video_backend="pyav")
    return [ds[i] for i in range(len(ds))]


def same(a, b) -> bool:
    import torch

    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    return a == b


def check_merge(sources: list[Path], workdir: Path) -> list[str]:
    from lerobot.datasets.aggregate import aggregate_datasets

    problems: list[str] = []
    names = [s.name for s in sources]
    out = workdir / ("merged-" + "-".join(names))
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.monotonic()
    aggregate_datasets([f"local/{n}" for n in names], "local/merged", roots=sources, aggr_root=out)
    where = f"merge06 {'+'.join(names)}"
    problems += [f"{where}: {p}" for p in check_merged_table(sources, out)]
    compared, at = compare_to_sources(out, "local/merged", sources, where)
    problems += compared
    if not problems:
        print(f"ok   {where}: {at} frames of {len(sources)} sources, every value and pixel equal to its "
              f"source's, indices shifted ({time.monotonic() - t0:.1f}s)", flush=True)
    return problems


def compare_to_sources(out: Path, repo_id: str, sources: list[Path], where: str) -> tuple[list[str], int]:
    """compare_to_sources reads every frame of the merged dataset at out and of
    each source through LeRobotDataset and lists where they differ: the same
    values (same torch dtype, exact) and decoded pixels, index and
    episode_index shifted by the sources before; it returns the problems and
    the frames compared."""
    problems: list[str] = []
    merged = items(out, repo_id)
    at = 0
    for e_off, src in zip(_episode_offsets(sources), sources):
        for j, it in enumerate(items(src, f"local/{src.name}")):
            if at >= len(merged):
                problems.append(f"{where}: merged dataset ends at {at} frames, {src.name} has more")
                return problems, at
            m = merged[at]
            want = {"index": at, "episode_index": int(it["episode_index"]) + e_off}
            for k, v in want.items():
                if int(m[k]) != v:
                    problems.append(f"{where}: merged frame {at} ({src.name} frame {j}) {k} {int(m[k])}, want {v}")
            for k, v in it.items():
                if k in ("index", "episode_index", "task_index") or k.endswith("_is_pad"):
                    continue
                if not same(m.get(k), v):
                    diff = ""
                    if hasattr(v, "dtype") and hasattr(m.get(k), "dtype") and m[k].shape == v.shape:
                        diff = f", max |diff| {float((m[k].double() - v.double()).abs().max())}"
                    problems.append(f"{where}: merged frame {at} ({src.name} frame {j}) {k}: "
                                    f"{_show(m.get(k))} != source {_show(v)}{diff}")
            at += 1
            if len(problems) > 10:
                return problems, at
    if at != len(merged):
        problems.append(f"{where}: merged dataset has {len(merged)} frames, the sources {at}")
    return problems, at


def _episode_offsets(sources: list[Path]) -> list[int]:
    offs, total = [], 0
    for s in sources:
        offs.append(total)
        total += json.loads((s / "meta/info.json").read_text())["total_episodes"]
    return offs


def _show(v) -> str:
    if hasattr(v, "dtype"):
        return f"{v.dtype}{tuple(v.shape)} {v.flatten()[:4].tolist()}"
    return repr(v)


def data_table(root: Path):
    """data_table is the dataset's data Parquet files as one Arrow table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa.concat_tables([pq.read_table(f) for f in sorted((root / "data").glob("*/*.parquet"))])


def check_twin_values(twin: Path, given: dict) -> list[str]:
    """The twin's data files hold the values it was given, in their dtypes
    (LeRobot's own writer: the reference for what each dtype is stored as)."""
    table = data_table(twin)
    problems = []
    for k in given[0]:
        col = table.column(k).to_pylist()
        want_type = NUMPY[given[0][k].dtype.name] if given[0][k].dtype.name in NUMPY else None
        arrow_t = str(table.schema.field(k).type)
        for i, v in enumerate(col):
            want = given[i][k].reshape(-1).tolist()
            got = v if isinstance(v, list) else [v]
            if got != want:
                problems.append(f"twin data {k} row {i}: {got[:4]}, wrote {want[:4]} ({arrow_t})")
                break
        if want_type is None:
            problems.append(f"twin data {k}: unexpected dtype {given[0][k].dtype}")
    return problems[:10]


def check_merged_table(sources: list[Path], out: Path) -> list[str]:
    """The merged data files hold the sources' rows in order, every column
    with its source's Arrow value type, index and episode_index shifted."""
    import pyarrow as pa

    merged = data_table(out)
    srcs = [data_table(s) for s in sources]
    problems = []
    want_rows = sum(t.num_rows for t in srcs)
    if merged.num_rows != want_rows:
        return [f"merged data has {merged.num_rows} rows, the sources {want_rows}"]
    at = 0
    for e_off, src, t in zip(_episode_offsets(sources), sources, srcs):
        part = merged.slice(at, t.num_rows)
        for name in t.column_names:
            if name == "task_index":
                continue
            got, want = part.column(name), t.column(name)
            gt, wt = got.type, want.type
            if pa.types.is_list(gt) or pa.types.is_fixed_size_list(gt):
                gt = gt.value_type
            if pa.types.is_list(wt) or pa.types.is_fixed_size_list(wt):
                wt = wt.value_type
            if gt != wt:
                problems.append(f"merged data {name}: value type {gt}, {src.name} has {wt}")
                continue
            g, w = got.to_pylist(), want.to_pylist()
            if name == "index":
                w = [v + at for v in w]
            elif name == "episode_index":
                w = [v + e_off for v in w]
            if g != w:
                i = next(i for i in range(len(g)) if g[i] != w[i])
                problems.append(f"merged data {name} row {at + i}: {g[i]!r}, {src.name} row {i} has {w[i]!r}")
        at += t.num_rows
    return problems[:10]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("shards", nargs="+", type=Path)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--twin-first", action="store_true",
                    help="merge the twin before the shards (H.264: see FINDINGS.md, LeRobot 0.6 item 6)")
    a = ap.parse_args(argv)
    a.workdir.mkdir(parents=True, exist_ok=True)
    shards = [s.resolve() for s in a.shards]
    twin = a.workdir / f"twin-of-{shards[0].name}"
    shutil.rmtree(twin, ignore_errors=True)
    problems: list[str] = []
    try:
        given = write_twin(shards[0], twin)
        problems += check_twin_values(twin, given)
        problems += check_merge([twin] + shards if a.twin_first else shards + [twin], a.workdir)
    except Exception as e:  # noqa: BLE001 - any LeRobot exception is a finding
        problems.append(f"merge06 {'+'.join(s.name for s in shards)}: {type(e).__name__}: {str(e)[:800]}")
    for p in problems:
        print("FAIL " + p, flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
