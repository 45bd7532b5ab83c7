"""check.py proves that LeRobot's own loader reads our shards as intended.

Run inside the conformance venv (setup.sh); HF_HUB_OFFLINE=1 is forced so an
inconsistent shard fails instead of falling back to the Hub.

  python check.py [options] SHARD=EXPECT.json [SHARD=EXPECT.json ...]
  python check.py expect SHARD [--summary EXPORT_SUMMARY.json] -o EXPECT.json
  python check.py --selftest

For every shard it:
  - loads LeRobotDatasetMetadata and LeRobotDataset(repo_id, root=SHARD) and
    compares totals, fps, features (names, dtypes, shapes), tasks, video keys
    and episode lengths with the expectations file;
  - reads every frame of every episode through a torch DataLoader with
    video_backend="pyav", and again with "torchcodec" where it loads, so every
    video frame is looked up with LeRobot's own timestamp tolerance; checks
    index/frame_index/timestamp/task of every item;
  - loads with delta_timestamps windows [-2..2]/fps on one non-video feature
    and each camera, and checks values and *_is_pad at every episode border;
  - reads meta/tasks.parquet with pandas and checks the task strings come back
    as its index (named "task" when the expectations ask for it);
  - checks the data Parquet directly: timestamp == frame_index/fps (float32),
    index contiguous, dataset_from/to_index consistent with lengths.
With --merge A,B (shard positions, 0-based) it merges those shards with
LeRobot's aggregate_datasets into a temp dir, loads and reads the result,
checks the totals add up and reports whether ceres/* episode columns survive.

Expectations JSON keys: total_episodes, total_frames, fps, features (list of
names, or {name: {dtype, shape}}), tasks (strings), video_keys, episode_lengths;
optional: tasks_index_name ("task"), repo_id, video_shapes.

Exit status: 0 all checks passed; 1 a check failed; 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TQDM_DISABLE", "1")  # LeRobot's merge progress bars clutter CI logs

DEFAULT_KEYS = ("timestamp", "frame_index", "episode_index", "index", "task_index")
DELTA_STEPS = (-2, -1, 0, 1, 2)
# VERBOSE prints Python tracebacks of loader exceptions (CONFORMANCE_VERBOSE=1).
VERBOSE = os.environ.get("CONFORMANCE_VERBOSE") == "1"


def trace() -> None:
    """trace prints the traceback of the exception being handled, with CONFORMANCE_VERBOSE=1."""
    if VERBOSE:
        traceback.print_exc(file=sys.stderr)


class CheckError(Exception):
    """CheckError is one failed conformance check; its message names the shard and the check."""


class Report:
    """Report collects failures and notes of one run."""

    def __init__(self, expect_failure: bool = False) -> None:
        # expect_failure marks the self-test's corrupted datasets: their
        # failures are wanted, so they print as "xfail" to keep CI logs clear.
        self.fail_word = "xfail" if expect_failure else "FAIL"
        self.failures: list[str] = []
        self.notes: list[str] = []
        self.frames_read = 0

    def fail(self, where: str, msg: str) -> None:
        line = f"{self.fail_word} {where}: {msg}".replace("\n", " | ")
        print(line, flush=True)
        self.failures.append(line)

    def note(self, where: str, msg: str) -> None:
        line = f"note {where}: {msg}"
        print(line, flush=True)
        self.notes.append(line)

    def ok(self, where: str, msg: str) -> None:
        print(f"ok   {where}: {msg}", flush=True)


def expect_equal(rep: Report, where: str, what: str, got, want) -> bool:
    if got != want:
        rep.fail(where, f"{what}: got {got!r}, want {want!r}")
        return False
    return True


# ---------------------------------------------------------------- torchcodec


def torchcodec_status(video_file: Path | None) -> tuple[bool, str]:
    """torchcodec_status says whether torchcodec can decode here (it loads the
    system FFmpeg libraries lazily, so a real decode is the only proof)."""
    try:
        from torchcodec.decoders import VideoDecoder
    except Exception as e:  # noqa: BLE001 - any import failure means unavailable
        return False, f"import failed: {e}"
    if video_file is None:
        return True, "imported (no video to decode)"
    try:
        dec = VideoDecoder(str(video_file), seek_mode="approximate")
        dec.get_frames_at([0])
        return True, f"decodes ({dec.metadata.codec})"
    except Exception as e:  # noqa: BLE001
        return False, f"decode failed: {str(e).splitlines()[0][:300]}"


# ---------------------------------------------------------------- direct parquet checks


def check_parquet_direct(rep: Report, name: str, root: Path, fps: int, row_groups: bool = True) -> dict:
    """check_parquet_direct reads data and episodes Parquet with pyarrow,
    independently of LeRobot, and returns {episode_index: row dict}.
    row_groups False reports the row-group layout as a note instead of
    requiring it (for LeRobot's own merge output: 0.4.4 writes one group)."""
    import numpy as np
    import pyarrow.parquet as pq

    where = f"{name} parquet"
    eps_files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    data_files = sorted((root / "data").glob("*/*.parquet"))
    if not eps_files or not data_files:
        rep.fail(where, f"missing parquet: {len(eps_files)} episode files, {len(data_files)} data files")
        return {}
    eps = [r for f in eps_files for r in pq.read_table(f).to_pylist()]
    cols = ["index", "episode_index", "frame_index", "timestamp"]
    tables = [pq.read_table(f, columns=cols) for f in data_files]
    idx = np.concatenate([t.column("index").to_numpy() for t in tables])
    epi = np.concatenate([t.column("episode_index").to_numpy() for t in tables])
    fi = np.concatenate([t.column("frame_index").to_numpy() for t in tables])
    ts = np.concatenate([t.column("timestamp").to_numpy() for t in tables])
    bad = 0
    if not np.array_equal(idx, np.arange(len(idx))):
        rep.fail(where, "index is not 0..N-1 in file order")
        bad += 1
    if ts.dtype != np.float32:
        rep.fail(where, f"timestamp dtype {ts.dtype}, want float32")
        bad += 1
    grid = (fi.astype(np.float64) / fps).astype(np.float32)
    off = np.nonzero(ts != grid)[0]
    if len(off):
        i = off[0]
        rep.fail(where, f"{len(off)} timestamps off the frame grid; first at index {idx[i]}: "
                        f"timestamp {ts[i]!r} != frame_index {fi[i]}/fps {fps} = {grid[i]!r}")
        bad += 1
    by_ep = {}
    for e, row in enumerate(eps):
        if row["episode_index"] != e:
            rep.fail(where, f"episodes row {e} has episode_index {row['episode_index']}")
            bad += 1
        by_ep[row["episode_index"]] = row
    start = 0
    for e, row in sorted(by_ep.items()):
        n = row["length"]
        if (row["dataset_from_index"], row["dataset_to_index"]) != (start, start + n):
            rep.fail(where, f"episode {e}: dataset_from/to_index {row['dataset_from_index']}/"
                            f"{row['dataset_to_index']}, want {start}/{start + n} from lengths")
            bad += 1
        sel = epi == e
        if int(sel.sum()) != n:
            rep.fail(where, f"episode {e}: {int(sel.sum())} data rows, length says {n}")
            bad += 1
        elif not np.array_equal(fi[sel], np.arange(n)):
            rep.fail(where, f"episode {e}: frame_index is not 0..{n - 1}")
            bad += 1
        start += n
    layout = check_row_groups(rep.fail if row_groups else (lambda w, m: rep.note(w, "LeRobot's layout: " + m)),
                              where, data_files, by_ep)
    bad += layout if row_groups else 0
    if not bad:
        rep.ok(where, f"{len(idx)} rows in {len(data_files)} data file(s), {len(eps)} episodes: "
                      "index contiguous, timestamps on the 1/fps grid, from/to indices match lengths"
                      + (", one row group per episode" if not layout else ""))
    return by_ep


def check_row_groups(fail, where: str, data_files: list[Path], by_ep: dict) -> int:
    """check_row_groups requires the layout LeRobot reads fastest: each row
    group of a data file holds exactly one whole episode, with min/max
    statistics on episode_index (LeRobot 0.6 selects an episode's rows with a
    pyarrow filter on episode_index, which skips row groups by those
    statistics; its own writer and merge write one row group per episode).
    fail(where, message) reports a failure; it returns their number."""
    import pyarrow.parquet as pq

    seen = []
    for f in data_files:
        md = pq.ParquetFile(f).metadata
        col = md.schema.names.index("episode_index")
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            st = rg.column(col).statistics
            if st is None or not st.has_min_max or st.min != st.max:
                fail(where, f"{f.name} row group {g}: episode_index statistics "
                                f"{(st.min, st.max) if st is not None and st.has_min_max else None}, "
                                "want one episode (min == max)")
                return 1
            e = st.min
            if e not in by_ep or rg.num_rows != by_ep[e]["length"]:
                fail(where, f"{f.name} row group {g}: {rg.num_rows} rows of episode {e}, "
                                f"want the whole episode ({by_ep.get(e, {}).get('length')} rows)")
                return 1
            seen.append(e)
    if seen != sorted(by_ep):
        fail(where, f"row groups hold episodes {seen[:8]}..., want each episode once in order")
        return 1
    return 0


def check_tasks_pandas(rep: Report, name: str, root: Path, expect: dict) -> list[str]:
    """check_tasks_pandas proves the task strings come back as the index of
    pd.read_parquet(meta/tasks.parquet), in task_index order."""
    import pandas as pd

    where = f"{name} tasks.parquet"
    df = pd.read_parquet(root / "meta" / "tasks.parquet")
    idx = list(df.index)
    ok = True
    if not all(isinstance(t, str) for t in idx):
        rep.fail(where, f"pandas index holds {type(idx[0]).__name__ if idx else '?'} values, not the "
                        f"task strings (index {df.index!r}; missing or wrong 'pandas' metadata?)")
        return []
    if "task_index" not in df.columns or list(df["task_index"]) != list(range(len(df))):
        rep.fail(where, f"task_index column is not 0..{len(df) - 1} in row order")
        ok = False
    want_name = expect.get("tasks_index_name", "any")
    if want_name != "any" and df.index.name != want_name:
        rep.fail(where, f"index name {df.index.name!r}, want {want_name!r}")
        ok = False
    if sorted(idx) != sorted(expect["tasks"]):
        rep.fail(where, f"task strings {idx!r}, want {sorted(expect['tasks'])!r}")
        ok = False
    if ok:
        rep.ok(where, f"pandas index (name {df.index.name!r}) = {len(idx)} task strings")
    return idx


# ---------------------------------------------------------------- LeRobot checks


class NoWarnings:
    """NoWarnings fails a check when LeRobot logs a warning (or raises a
    Python warning other than a deprecation of its own API) while loading:
    LeRobot 0.6 logs one for every info.json key it does not know, and for
    legacy or inconsistent metadata."""

    def __init__(self, rep: Report, where: str) -> None:
        import logging

        self.rep, self.where, self.records = rep, where, []
        self.handler = logging.Handler(logging.WARNING)
        self.handler.emit = self.records.append

    def __enter__(self):
        import logging
        import warnings

        logging.getLogger().addHandler(self.handler)
        self.caught = warnings.catch_warnings(record=True)
        self.warned = self.caught.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc) -> None:
        import logging

        logging.getLogger().removeHandler(self.handler)
        self.caught.__exit__(*exc)
        msgs = [f"{r.name}: {r.getMessage()}" for r in self.records]
        msgs += [f"{w.category.__name__}: {w.message}" for w in self.warned
                 if not issubclass(w.category, (DeprecationWarning, FutureWarning))]
        for m in msgs:
            self.rep.fail(self.where, f"warning while loading: {m[:400]}")


def check_meta(rep: Report, name: str, root: Path, repo_id: str, expect: dict):
    from lerobot.datasets.lerobot_dataset import LeRobotDatasetMetadata

    where = f"{name} metadata"
    with NoWarnings(rep, where):
        meta = LeRobotDatasetMetadata(repo_id, root=root)
    ok = expect_equal(rep, where, "codebase_version", meta.info.get("codebase_version"), "v3.0")
    ok &= expect_equal(rep, where, "total_episodes", meta.total_episodes, expect["total_episodes"])
    ok &= expect_equal(rep, where, "total_frames", meta.total_frames, expect["total_frames"])
    ok &= expect_equal(rep, where, "fps", meta.fps, expect["fps"])
    feats = expect["features"]
    if isinstance(feats, dict):
        got = {k: {"dtype": v["dtype"], "shape": list(v["shape"])} for k, v in meta.features.items()}
        want = {k: {"dtype": v["dtype"], "shape": list(v["shape"])} for k, v in feats.items()}
        ok &= expect_equal(rep, where, "features (dtype, shape)", got, want)
    else:
        ok &= expect_equal(rep, where, "feature names", sorted(meta.features), sorted(feats))
    for k in DEFAULT_KEYS:
        ft = meta.features.get(k)
        want_dtype = "float32" if k == "timestamp" else "int64"
        if ft is None or ft["dtype"] != want_dtype or tuple(ft["shape"]) != (1,):
            rep.fail(where, f"default feature {k}: {ft!r}, want dtype {want_dtype} shape [1]")
            ok = False
    ok &= expect_equal(rep, where, "video_keys", sorted(meta.video_keys), sorted(expect["video_keys"]))
    ok &= expect_equal(rep, where, "task strings", sorted(meta.tasks.index), sorted(expect["tasks"]))
    lengths = [int(x) for x in meta.episodes["length"]]
    ok &= expect_equal(rep, where, "episode lengths", lengths, list(expect["episode_lengths"]))
    if ok:
        rep.ok(where, f"{meta.total_episodes} episodes, {meta.total_frames} frames, fps {meta.fps}, "
                      f"{len(meta.features)} features, {len(meta.video_keys)} camera(s), "
                      f"{len(meta.tasks)} task(s)")
    return meta


def read_all(rep: Report, name: str, root: Path, repo_id: str, meta, backend: str, expect: dict,
             pixels: dict | None = None) -> int:
    """read_all iterates every frame with a DataLoader and checks each item.
    pixels, when given, receives every camera's frames as uint8 tensors."""
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    where = f"{name} read[{backend}]"
    t0 = time.monotonic()
    with NoWarnings(rep, where):
        ds = LeRobotDataset(repo_id, root=root, video_backend=backend)
    if not expect_equal(rep, where, "len(dataset)", len(ds), expect["total_frames"]):
        return 0
    expect_equal(rep, where, "num_episodes", ds.num_episodes, expect["total_episodes"])
    ep_tasks = {e: list(meta.episodes[e]["tasks"]) for e in range(meta.total_episodes)}
    shapes = {k: tuple(meta.features[k]["shape"]) for k in meta.video_keys}
    fps = meta.fps
    loader = torch.utils.data.DataLoader(ds, batch_size=32, shuffle=False, num_workers=0)
    n = 0
    bad = 0
    for batch in loader:
        b = len(batch["index"])
        idx = batch["index"].tolist()
        if idx != list(range(n, n + b)):
            rep.fail(where, f"items {n}..{n + b - 1} have index {idx[:4]}...")
            bad += 1
        ts = batch["timestamp"].to(torch.float32)
        grid = (batch["frame_index"].to(torch.float64) / fps).to(torch.float32)
        if not torch.equal(ts, grid):
            rep.fail(where, f"items {n}..: timestamp not frame_index/fps")
            bad += 1
        for i in range(b):
            e = int(batch["episode_index"][i])
            if batch["task"][i] not in ep_tasks.get(e, []):
                rep.fail(where, f"item {n + i}: task {batch['task'][i]!r} not in episode {e} tasks "
                                f"{ep_tasks.get(e)!r}")
                bad += 1
                break
        for k, (h, w, c) in shapes.items():
            v = batch[k]
            if tuple(v.shape) != (b, c, h, w) or v.dtype != torch.float32:
                rep.fail(where, f"{k}: batch shape {tuple(v.shape)} {v.dtype}, want ({b},{c},{h},{w}) float32")
                bad += 1
            elif float(v.min()) < 0 or float(v.max()) > 1:
                rep.fail(where, f"{k}: values outside [0,1]")
                bad += 1
            elif pixels is not None:
                pixels.setdefault(k, []).append((v * 255).round().to(torch.uint8))
        n += b
        if bad > 5:
            rep.fail(where, "too many failures, stopping this read")
            break
    if n != expect["total_frames"]:
        rep.fail(where, f"read {n} items, want {expect['total_frames']}")
        bad += 1
    if not bad:
        rep.ok(where, f"{n} frames ({len(shapes)} camera(s)) in {time.monotonic() - t0:.1f}s")
    return n


def check_delta_windows(rep: Report, name: str, root: Path, repo_id: str, meta, backend: str) -> None:
    """check_delta_windows loads with [-2..2]/fps windows and checks every
    episode border: *_is_pad flags and the clamped neighbour values."""
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    where = f"{name} delta[{backend}]"
    fps = meta.fps
    vector = [k for k, f in meta.features.items()
              if k not in DEFAULT_KEYS and f["dtype"] not in ("video", "image", "string")]
    keys = vector[:1] + list(meta.video_keys)
    if not keys:
        rep.note(where, "no feature to window")
        return
    deltas = {k: [s / fps for s in DELTA_STEPS] for k in keys}
    plain = LeRobotDataset(repo_id, root=root, video_backend=backend)
    ds = LeRobotDataset(repo_id, root=root, video_backend=backend, delta_timestamps=deltas)
    checked = 0
    bad = 0
    cache: dict[int, dict] = {}

    def plain_item(i: int) -> dict:
        if i not in cache:
            cache[i] = plain[i]
        return cache[i]

    for e in range(meta.total_episodes):
        start = int(meta.episodes[e]["dataset_from_index"])
        length = int(meta.episodes[e]["length"])
        local = sorted({f for f in (0, 1, length - 2, length - 1) if 0 <= f < length})
        for f in local:
            item = ds[start + f]
            for k in keys:
                pad = item[f"{k}_is_pad"].tolist()
                want_pad = [not (0 <= f + s < length) for s in DELTA_STEPS]
                if pad != want_pad:
                    rep.fail(where, f"episode {e} frame {f} {k}_is_pad {pad}, want {want_pad}")
                    bad += 1
                    continue
                vals = item[k]
                if vals.shape[0] != len(DELTA_STEPS):
                    rep.fail(where, f"episode {e} frame {f} {k}: window of {vals.shape[0]}, want 5")
                    bad += 1
                    continue
                for j, s in enumerate(DELTA_STEPS):
                    g = min(max(f + s, 0), length - 1)  # LeRobot repeats the edge frame when padding
                    ref = plain_item(start + g)[k]
                    got = vals[j]
                    same = torch.equal(got, ref) if k not in meta.video_keys else \
                        float((got - ref).abs().max()) <= 1.5 / 255
                    if not same:
                        rep.fail(where, f"episode {e} frame {f} {k}[{s:+d}] differs from frame {g}")
                        bad += 1
                        break
            checked += 1
    if not bad:
        rep.ok(where, f"{checked} border items x {len(keys)} key(s) {keys}: is_pad and values right")


def check_shard(rep: Report, name: str, root: Path, expect: dict, backends: list[str],
                row_groups: bool = True) -> None:
    repo_id = expect.get("repo_id", f"local/{name}")
    try:
        check_parquet_direct(rep, name, root, expect["fps"], row_groups)
        check_tasks_pandas(rep, name, root, expect)
        meta = check_meta(rep, name, root, repo_id, expect)
    except Exception as e:  # noqa: BLE001 - any loader exception is a finding
        rep.fail(f"{name} load", f"{type(e).__name__}: {e}")
        trace()
        return
    pixels: dict[str, dict] = {}
    for backend in backends:
        if backend != "pyav" and not meta.video_keys:
            continue
        try:
            rep.frames_read += read_all(rep, name, root, repo_id, meta, backend, expect,
                                        pixels.setdefault(backend, {}))
        except Exception as e:  # noqa: BLE001
            rep.fail(f"{name} read[{backend}]", f"{type(e).__name__}: {str(e)[:600]}")
            trace()
        try:
            check_delta_windows(rep, name, root, repo_id, meta, backend)
        except Exception as e:  # noqa: BLE001
            rep.fail(f"{name} delta[{backend}]", f"{type(e).__name__}: {str(e)[:600]}")
            trace()
    compare_backends(rep, name, pixels)


def compare_backends(rep: Report, name: str, pixels: dict[str, dict]) -> None:
    """compare_backends requires every backend to decode the same pixels for
    every frame of every camera (pyav and torchcodec each run FFmpeg, with
    their own builds and colour conversion)."""
    import torch

    if len(pixels) < 2:
        return
    (b0, p0), *others = pixels.items()
    for b1, p1 in others:
        where = f"{name} pixels[{b0}={b1}]"
        for k in sorted(p0):
            if k not in p1 or not p1[k]:
                continue
            a, b = torch.cat(p0[k]), torch.cat(p1[k])
            if a.shape != b.shape:
                rep.fail(where, f"{k}: {tuple(a.shape)} frames vs {tuple(b.shape)}")
                continue
            diff = (a.int() - b.int()).abs().flatten(1).max(dim=1).values
            off = torch.nonzero(diff).flatten()
            if len(off):
                rep.fail(where, f"{k}: {len(off)} of {len(a)} frames differ (first frame {int(off[0])}, "
                                f"max difference {int(diff.max())}/255)")
            else:
                rep.ok(where, f"{k}: {len(a)} frames, identical pixels")


def check_merge(rep: Report, shards: list[tuple[str, Path, dict]], workdir: Path, backend: str) -> None:
    """check_merge merges shards with LeRobot's aggregate_datasets and checks the result."""
    import pyarrow.parquet as pq
    from lerobot.datasets.aggregate import aggregate_datasets

    names = "+".join(s[0] for s in shards)
    where = f"merge {names}"
    out = workdir / ("merged-" + "-".join(s[0] for s in shards))
    if out.exists():
        shutil.rmtree(out)
    ids = [s[2].get("repo_id", f"local/{s[0]}") for s in shards]
    try:
        aggregate_datasets(ids, "local/merged", roots=[s[1] for s in shards], aggr_root=out)
    except Exception as e:  # noqa: BLE001
        rep.fail(where, f"aggregate_datasets: {type(e).__name__}: {str(e)[:600]}")
        trace()
        return
    tasks = sorted({t for s in shards for t in s[2]["tasks"]})
    expect = {
        "repo_id": "local/merged",
        "total_episodes": sum(s[2]["total_episodes"] for s in shards),
        "total_frames": sum(s[2]["total_frames"] for s in shards),
        "fps": shards[0][2]["fps"],
        "features": shards[0][2]["features"],
        "tasks": tasks,
        "video_keys": shards[0][2]["video_keys"],
        "episode_lengths": [n for s in shards for n in s[2]["episode_lengths"]],
    }
    check_shard(rep, f"merged({names})", out, expect, [backend], row_groups=False)
    # Do the ceres/* episode columns survive? Reported, not required.
    src_cols = sorted({c for s in shards for f in sorted((s[1] / "meta/episodes").glob("*/*.parquet"))
                       for c in pq.read_schema(f).names if c.startswith("ceres/")})
    if not src_cols:
        rep.note(where, "sources have no ceres/* episode columns")
        return
    dst_cols = {c for f in sorted((out / "meta/episodes").glob("*/*.parquet")) for c in pq.read_schema(f).names}
    kept = [c for c in src_cols if c in dst_cols]
    lost = [c for c in src_cols if c not in dst_cols]
    if lost:
        rep.note(where, f"ceres/* episode columns LOST by LeRobot's merge: {lost}")
    if kept:
        src_vals = [r for s in shards for f in sorted((s[1] / "meta/episodes").glob("*/*.parquet"))
                    for r in pq.read_table(f, columns=kept).to_pylist()]
        dst_vals = [r for f in sorted((out / "meta/episodes").glob("*/*.parquet"))
                    for r in pq.read_table(f, columns=kept).to_pylist()]
        same = src_vals == dst_vals
        rep.note(where, f"ceres/* episode columns kept by LeRobot's merge: {len(kept)}/{len(src_cols)}, "
                        f"values {'identical' if same else 'CHANGED'}")


# ---------------------------------------------------------------- expectations


def _get(doc, *path):
    """_get follows path through nested dicts; None when any step is missing."""
    for k in path:
        if not isinstance(doc, dict) or k not in doc:
            return None
        doc = doc[k]
    return doc


def make_expectations(shard: Path, summary: Path | None) -> tuple[dict, list[str]]:
    """make_expectations derives what LeRobot must read from sources other than
    the loader itself: episode lengths and tasks from the episodes Parquet
    (read with pyarrow), features from info.json, and cross-checks them with
    info.json's totals, the exporter's ceres/export-report.json (frames,
    episodes, per-attempt lengths, cameras) and its --json summary. It returns
    the expectations and a list of disagreements."""
    import pyarrow.parquet as pq

    problems: list[str] = []
    info = json.loads((shard / "meta/info.json").read_text())
    rows = [r for f in sorted((shard / "meta/episodes").glob("*/*.parquet"))
            for r in pq.read_table(f, columns=["episode_index", "length", "tasks"]).to_pylist()]
    lengths = [int(r["length"]) for r in rows]
    tasks = sorted({t for r in rows for t in r["tasks"]})
    frames = sum(lengths)
    video_keys = sorted(k for k, v in info["features"].items() if v["dtype"] == "video")
    exp = {
        "total_episodes": len(rows),
        "total_frames": frames,
        "fps": info["fps"],
        "features": {k: {"dtype": v["dtype"], "shape": v["shape"]} for k, v in info["features"].items()},
        "tasks": tasks,
        "video_keys": video_keys,
        "episode_lengths": lengths,
        # Our exporter writes the index named "task", as newer LeRobot does.
        "tasks_index_name": "task",
    }
    if info.get("total_frames") != frames:
        problems.append(f"info.json total_frames {info.get('total_frames')} != sum of episode lengths {frames}")
    if info.get("total_episodes") != len(rows):
        problems.append(f"info.json total_episodes {info.get('total_episodes')} != {len(rows)} episode rows")
    if info.get("total_tasks") != len(tasks):
        problems.append(f"info.json total_tasks {info.get('total_tasks')} != {len(tasks)} task strings")

    reports = []
    path = shard / "ceres" / "export-report.json"
    if path.exists():
        reports.append(("ceres/export-report.json", json.loads(path.read_text())))
    else:
        problems.append(f"{path} missing")
    if summary:
        doc = json.loads(summary.read_text()) if summary.exists() else None
        if doc is None or _get(doc, "report") is None:
            problems.append(f"--json summary {summary}: missing or without a report")
        else:
            reports.append(("--json summary", doc["report"]))
    for label, rep in reports:
        if rep.get("frames") != frames:
            problems.append(f"{label}: frames {rep.get('frames')!r} != sum of episode lengths {frames}")
        if rep.get("episodes") != len(rows):
            problems.append(f"{label}: episodes {rep.get('episodes')!r} != {len(rows)} episode rows")
        if rep.get("fps") != info["fps"]:
            problems.append(f"{label}: fps {rep.get('fps')!r} != info.json fps {info['fps']}")
        attempts = rep.get("attempts")
        if isinstance(attempts, list):
            by_ep = {a["episode"]: a.get("length") for a in attempts
                     if isinstance(a, dict) and isinstance(a.get("episode"), int) and a["episode"] >= 0}
            got = [by_ep.get(e) for e in range(len(rows))]
            if sorted(by_ep) != list(range(len(rows))) or got != lengths:
                problems.append(f"{label}: exported attempts' episode lengths {got} != episodes parquet {lengths}")
        else:
            problems.append(f"{label}: no attempts list")
        cams = rep.get("cameras")
        if isinstance(cams, dict):
            feats = sorted(c.get("feature") for c in cams.values() if isinstance(c, dict))
            if feats != video_keys:
                problems.append(f"{label}: cameras {feats} != info.json video features {video_keys}")
            for name, c in cams.items():
                if isinstance(c, dict) and c.get("frames") not in (None, frames):
                    problems.append(f"{label}: camera {name} frames {c.get('frames')} != {frames}")
        elif video_keys:
            problems.append(f"{label}: no cameras, but info.json has {video_keys}")
    return exp, problems


# ---------------------------------------------------------------- self-test


def selftest(workdir: Path, backends: list[str] | None) -> int:
    """selftest proves the checker: it must pass on LeRobot's own output and
    fail on corrupted copies of it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import make_reference as mr

    def fresh_build(name: str, vcodec: str | None) -> Path:
        d = workdir / name
        if d.exists():
            shutil.rmtree(d)
        mr.build(d, vcodec)
        return d

    t0 = time.monotonic()
    ref = fresh_build("lerobot-reference", "libsvtav1")
    # A second, identical build to merge with: LeRobot 0.4.4 merges only
    # datasets whose feature dicts (video info included) are equal.
    ref_b = fresh_build("lerobot-reference-b", "libsvtav1")
    ref_h264 = fresh_build("lerobot-reference-h264", "h264")
    ref_novideo = fresh_build("lerobot-reference-no-video", None)
    exp = mr.expectations(with_video=True)
    if backends is None:
        backends = choose_backends(Report(), [ref], "auto")

    results = []

    def run(label: str, root: Path, want_pass: bool, merge: list[Path] | None = None,
            expect: dict | None = None) -> None:
        rep = Report(expect_failure=not want_pass)
        print(f"== selftest {label}", flush=True)
        check_shard(rep, label, root, expect or exp, backends)
        if merge:
            check_merge(rep, [(p.name, p, exp) for p in merge], workdir, "pyav")
        passed = not rep.failures
        good = passed == want_pass
        results.append((label, good, rep))
        print(f"== selftest {label}: {'passed' if passed else 'failed'} "
              f"({'as wanted' if good else 'NOT AS WANTED'})", flush=True)

    run("lerobot-reference", ref, True, merge=[ref, ref_b])
    run("lerobot-reference-h264", ref_h264, True)
    run("lerobot-reference-no-video", ref_novideo, True, expect=mr.expectations(with_video=False))

    # 1. tasks.parquet without its pandas metadata: task strings become a plain column.
    c1 = workdir / "corrupt-tasks-no-pandas-metadata"
    shutil.rmtree(c1, ignore_errors=True)
    shutil.copytree(ref, c1)
    t = pq.read_table(c1 / "meta/tasks.parquet")
    pq.write_table(t.replace_schema_metadata(None), c1 / "meta/tasks.parquet")
    run(c1.name, c1, False)

    # 2. info.json total_frames one too many.
    c2 = workdir / "corrupt-total-frames"
    shutil.rmtree(c2, ignore_errors=True)
    shutil.copytree(ref, c2)
    info = json.loads((c2 / "meta/info.json").read_text())
    info["total_frames"] += 1
    (c2 / "meta/info.json").write_text(json.dumps(info, indent=4))
    run(c2.name, c2, False)

    # 3. timestamps off the grid by a third of a frame from frame 3 of each episode on.
    c3 = workdir / "corrupt-timestamps-off-grid"
    shutil.rmtree(c3, ignore_errors=True)
    shutil.copytree(ref, c3)
    p = next((c3 / "data").glob("*/*.parquet"))
    t = pq.read_table(p)
    fi = t.column("frame_index").to_pylist()
    ts = [v + (1 / (3 * mr.FPS) if f >= 3 else 0.0) for v, f in zip(t.column("timestamp").to_pylist(), fi)]
    t = t.set_column(t.schema.get_field_index("timestamp"), "timestamp", pa.array(ts, pa.float32()))
    pq.write_table(t, p)
    run(c3.name, c3, False)

    # 4. video from_timestamp of episode 1 shifted by one frame.
    c4 = workdir / "corrupt-video-from-timestamp"
    shutil.rmtree(c4, ignore_errors=True)
    shutil.copytree(ref, c4)
    p = next((c4 / "meta/episodes").glob("*/*.parquet"))
    t = pq.read_table(p)
    col = f"videos/{mr.CAMERA}/from_timestamp"
    vals = t.column(col).to_pylist()
    vals[1] += 1 / mr.FPS / 2
    t = t.set_column(t.schema.get_field_index(col), col, pa.array(vals, pa.float64()))
    pq.write_table(t, p)
    run(c4.name, c4, False)

    # 5. data rows in row groups of 4: episodes split across row groups.
    c5 = workdir / "corrupt-row-groups"
    shutil.rmtree(c5, ignore_errors=True)
    shutil.copytree(ref, c5)
    p = next((c5 / "data").glob("*/*.parquet"))
    pq.write_table(pq.read_table(p), p, row_group_size=4)
    run(c5.name, c5, False)

    # 6. info.json with a key LeRobot does not know (v2.x's total_videos):
    #    LeRobot 0.6's typed DatasetInfo logs a warning; 0.4.4 keeps a plain dict.
    import lerobot.datasets.utils as lu

    if hasattr(lu, "DatasetInfo"):
        c6 = workdir / "corrupt-info-unknown-key"
        shutil.rmtree(c6, ignore_errors=True)
        shutil.copytree(ref, c6)
        info = json.loads((c6 / "meta/info.json").read_text())
        info["total_videos"] = 1
        (c6 / "meta/info.json").write_text(json.dumps(info, indent=4))
        run(c6.name, c6, False)

    print("== selftest summary")
    for label, good, rep in results:
        first = rep.failures[0] if rep.failures else "no failure"
        print(f"  {'ok ' if good else 'BAD'} {label}: {len(rep.failures)} failure(s); first: {first[:200]}")
    bad = [r for r in results if not r[1]]
    frames = sum(r[2].frames_read for r in results)
    print(f"conformance selftest: {len(results)} datasets, {frames} frames read, "
          f"{time.monotonic() - t0:.1f}s, {'PASS' if not bad else 'FAIL'}")
    return 0 if not bad else 1


# ---------------------------------------------------------------- main


def choose_backends(rep: Report, roots: list[Path], want: str) -> list[str]:
    first_video = next((p for r in roots for p in sorted((r / "videos").rglob("*.mp4"))), None)
    if want == "pyav":
        return ["pyav"]
    ok, why = torchcodec_status(first_video)
    rep.note("torchcodec", why)
    if ok:
        return ["pyav", "torchcodec"]
    if want == "torchcodec":
        rep.fail("torchcodec", f"required but unavailable: {why}")
    return ["pyav"]


def main(argv: list[str]) -> int:
    if argv and argv[0] == "expect":
        ap = argparse.ArgumentParser(prog="check.py expect")
        ap.add_argument("shard", type=Path)
        ap.add_argument("--summary", type=Path)
        ap.add_argument("-o", "--output", type=Path, required=True)
        a = ap.parse_args(argv[1:])
        exp, problems = make_expectations(a.shard, a.summary)
        a.output.write_text(json.dumps(exp, indent=2) + "\n")
        for p in problems:
            print(f"FAIL expectations {a.shard}: {p}")
        return 1 if problems else 0

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("shards", nargs="*", help="SHARD_DIR=EXPECT.json")
    ap.add_argument("--merge", action="append", default=[],
                    help="comma-separated shard positions (0-based) to merge with LeRobot; repeatable")
    ap.add_argument("--backends", choices=["auto", "pyav", "torchcodec"], default="auto",
                    help="auto: pyav, plus torchcodec where it decodes (default)")
    ap.add_argument("--workdir", type=Path, help="scratch directory (default: a temp dir, removed)")
    ap.add_argument("--selftest", action="store_true", help="check LeRobot's own output and corrupted copies")
    a = ap.parse_args(argv)

    t0 = time.monotonic()
    tmp = None
    workdir = a.workdir
    if workdir is None:
        tmp = tempfile.mkdtemp(prefix="ceres-conformance-")
        workdir = Path(tmp)
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HOME", str(workdir / "hf-home"))
    try:
        if a.selftest:
            return selftest(workdir, None if a.backends == "auto" else
                            choose_backends(Report(), [], a.backends))
        if not a.shards:
            ap.error("no shards given")
        shards = []
        for s in a.shards:
            if "=" not in s:
                ap.error(f"{s}: want SHARD_DIR=EXPECT.json")
            d, e = s.split("=", 1)
            root = Path(d).resolve()
            shards.append((root.name, root, json.loads(Path(e).read_text())))
        rep = Report()
        backends = choose_backends(rep, [s[1] for s in shards], a.backends)
        for name, root, exp in shards:
            print(f"== shard {name} ({root})", flush=True)
            check_shard(rep, name, root, exp, backends)
        for m in a.merge:
            pick = [shards[int(i)] for i in m.split(",")]
            print(f"== merge {'+'.join(p[0] for p in pick)}", flush=True)
            check_merge(rep, pick, workdir, "pyav")
        secs = time.monotonic() - t0
        status = "PASS" if not rep.failures else f"FAIL ({len(rep.failures)} failure(s))"
        print(f"conformance summary: {len(shards)} shard(s), {len(a.merge)} merge(s), "
              f"{rep.frames_read} frames read, backends {'+'.join(backends)}, {secs:.1f}s: {status}")
        for line in rep.failures:
            print("  " + line)
        return 0 if not rep.failures else 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
