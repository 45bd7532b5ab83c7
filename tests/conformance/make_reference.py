"""make_reference builds a small dataset with LeRobot's own writer and dumps,
as text, everything a third-party writer must reproduce.

LeRobot 0.4.4's writer (LeRobotDataset.create + add_frame + save_episode +
finalize) is the ground truth our Go shard writer is compared against: the
dump records the Arrow schemas, Parquet key-value metadata (decoded),
physical Parquet schemas, row groups, codecs, info.json, stats.json, the mp4
stream layout and the file tree.

Usage (inside the conformance venv, HF_HUB_OFFLINE=1):
  python make_reference.py --root DIR [--vcodec libsvtav1|h264|none] [--dump REFDIR]
  python make_reference.py --root SHARD --existing --dump OUTDIR   (dump any dataset to diff)
    --root   where the dataset is created (must not exist)
    --dump   write the text dump there (tests/conformance/reference)
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

REPO_ID = "ceres/reference"
FPS = 30
HEIGHT, WIDTH = 48, 64
CAMERA = "observation.images.front"
# Episode lengths and task strings: 3 episodes, 2 distinct tasks, the first
# task used twice so task_index reuse is visible.
EPISODES = [
    (7, "pick up the red cube"),
    (5, "place the cube in the bin"),
    (6, "pick up the red cube"),
]


def features(with_video: bool) -> dict:
    """features returns the user features of the reference dataset."""
    ft = {
        "observation.state": {"dtype": "float32", "shape": (3,), "names": ["x", "y", "z"]},
        "observation.gripper": {"dtype": "float32", "shape": (1,), "names": ["width"]},
        "observation.counter": {"dtype": "int64", "shape": (1,), "names": None},
        "observation.contact": {"dtype": "bool", "shape": (1,), "names": None},
        "action": {"dtype": "float32", "shape": (3,), "names": ["dx", "dy", "dz"]},
    }
    if with_video:
        ft[CAMERA] = {
            "dtype": "video",
            "shape": (HEIGHT, WIDTH, 3),
            "names": ["height", "width", "channels"],
        }
    return ft


def expectations(with_video: bool) -> dict:
    """expectations returns what check.py must find in the reference dataset,
    written down from the construction above, not read back from it."""
    defaults = {"timestamp": "float32", "frame_index": "int64", "episode_index": "int64",
                "index": "int64", "task_index": "int64"}
    feats = {k: {"dtype": v["dtype"], "shape": list(v["shape"])} for k, v in features(with_video).items()}
    feats.update({k: {"dtype": d, "shape": [1]} for k, d in defaults.items()})
    return {
        "repo_id": REPO_ID,
        "total_episodes": len(EPISODES),
        "total_frames": sum(n for n, _ in EPISODES),
        "fps": FPS,
        "features": feats,
        "tasks": sorted({t for _, t in EPISODES}),
        "video_keys": [CAMERA] if with_video else [],
        "episode_lengths": [n for n, _ in EPISODES],
        # LeRobot 0.4.4 writes the task strings as an unnamed pandas index,
        # 0.5.0 and later name it "task".
        "tasks_index_name": None if lerobot_version() < (0, 5) else "task",
    }


def lerobot_version() -> tuple[int, ...]:
    import importlib.metadata as md

    return tuple(int(x) for x in md.version("lerobot").split(".")[:2])


def frame_image(episode: int, k: int) -> np.ndarray:
    """frame_image draws a deterministic HWC uint8 frame: a flat colour per
    (episode, frame) plus a bar whose position encodes k, so frames differ."""
    img = np.zeros((HEIGHT, WIDTH, 3), dtype=np.uint8)
    img[..., 0] = (40 * episode + 20) % 256
    img[..., 1] = (9 * k) % 256
    img[..., 2] = 128
    x = (4 * k) % WIDTH
    img[:, x : x + 4, :] = 255
    return img


def encoder_kwargs(vcodec: str, **settings) -> dict:
    """encoder_kwargs chooses the codec in the form this LeRobot's create()
    takes: vcodec= (0.4.x) or rgb_encoder=RGBEncoderConfig(...) (0.6.x).
    settings (g, crf, preset, ...) apply to 0.6.x only."""
    import inspect

    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    if "rgb_encoder" not in inspect.signature(LeRobotDataset.create).parameters:
        return {"vcodec": vcodec}
    from lerobot.configs.video import RGBEncoderConfig

    return {"rgb_encoder": RGBEncoderConfig(vcodec=vcodec, **settings)}


def build(root: Path, vcodec: str | None) -> Path:
    """build writes the reference dataset at root with LeRobot's writer;
    vcodec None means no video feature."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    with_video = vcodec is not None
    kwargs = encoder_kwargs(vcodec) if with_video else {}
    ds = LeRobotDataset.create(
        REPO_ID,
        fps=FPS,
        features=features(with_video),
        root=root,
        robot_type="ceres-test-rig",
        use_videos=with_video,
        **kwargs,
    )
    counter = 0
    for ep, (length, task) in enumerate(EPISODES):
        for k in range(length):
            t = k / FPS
            frame = {
                "observation.state": np.array([ep + t, -t, 0.5 * k], dtype=np.float32),
                "observation.gripper": np.array([0.01 * k], dtype=np.float32),
                "observation.counter": np.array([counter], dtype=np.int64),
                "observation.contact": np.array([k % 3 == 0], dtype=bool),
                "action": np.array([0.1, -0.1 * ep, 0.01 * k], dtype=np.float32),
                "task": task,
            }
            if with_video:
                frame[CAMERA] = frame_image(ep, k)
            ds.add_frame(frame)
            counter += 1
        ds.save_episode()
    ds.finalize()
    return root


# ---------------------------------------------------------------- dumping


def _kv_metadata(pf) -> list[str]:
    import pyarrow as pa

    out = []
    md = pf.metadata.metadata or {}
    for key in sorted(md):
        k = key.decode()
        v = md[key]
        out.append(f"--- key {k!r} ({len(v)} bytes)")
        if k == "ARROW:schema":
            schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(v)))
            out.append("base64 of an Arrow IPC schema message; decoded:")
            out.append(schema.to_string(show_schema_metadata=False))
            if schema.metadata:
                out.append("decoded schema's own metadata keys: " + ", ".join(
                    sorted(x.decode() for x in schema.metadata)))
            continue
        text = v.decode("utf-8", errors="replace")
        try:
            out.append(json.dumps(json.loads(text), indent=2, ensure_ascii=False))
        except ValueError:
            out.append(text)
    if not md:
        out.append("(none)")
    return out


def dump_parquet(path: Path, rel: str) -> str:
    """dump_parquet describes one Parquet file as text."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    md = pf.metadata
    lines = [f"# {rel}", ""]
    lines.append(f"created_by: {md.created_by}")
    lines.append(f"format_version: {md.format_version}")
    lines.append(f"num_rows: {md.num_rows}  num_columns: {md.num_columns}")
    lines.append(f"num_row_groups: {md.num_row_groups}  rows per row group: "
                 f"{[md.row_group(i).num_rows for i in range(md.num_row_groups)]}")
    lines.append("")
    lines.append("## Arrow schema (pq.read_schema, types; metadata shown below)")
    lines.append(pf.schema_arrow.to_string(show_schema_metadata=False))
    lines.append("")
    lines.append("## Parquet physical schema (pq.ParquetFile(...).schema)")
    # str() starts with "<pyarrow._parquet.ParquetSchema object at 0x...>": drop it.
    lines.extend(str(pf.schema).splitlines()[1:])
    lines.append("## Column chunks of row group 0")
    if md.num_row_groups:
        rg = md.row_group(0)
        for i in range(rg.num_columns):
            c = rg.column(i)
            st = c.statistics
            lines.append(
                f"{c.path_in_schema}: physical={c.physical_type} compression={c.compression} "
                f"encodings={sorted(c.encodings)} dictionary_page={c.has_dictionary_page} "
                f"statistics={'yes' if st is not None and st.has_min_max else 'no'}"
            )
    lines.append("")
    lines.append("## Key-value metadata (file footer)")
    lines.extend(_kv_metadata(pf))
    lines.append("")
    lines.append("## Content (pyarrow to_pylist, one row per line)")
    for row in pf.read().to_pylist():
        lines.append(json.dumps(row, ensure_ascii=False, default=str))
    return "\n".join(lines) + "\n"


def dump_tasks_pandas(path: Path) -> str:
    import pandas as pd

    df = pd.read_parquet(path)
    return (
        "# pd.read_parquet(meta/tasks.parquet)\n"
        f"index.name: {df.index.name!r}\nindex dtype: {df.index.dtype}\n"
        f"columns: {list(df.columns)} dtypes: {dict((c, str(t)) for c, t in df.dtypes.items())}\n"
        f"{df.to_string()}\n"
    )


def dump_video(path: Path, rel: str) -> str:
    ffprobe = shutil.which("ffprobe")
    if not ffprobe:
        return f"# {rel}\nffprobe not found\n"
    streams = subprocess.run(
        [ffprobe, "-v", "error", "-show_format", "-show_streams", "-of", "json", str(path)],
        check=True, capture_output=True, text=True).stdout
    packets = subprocess.run(
        [ffprobe, "-v", "error", "-select_streams", "v:0", "-show_entries",
         "packet=pts,dts,duration,flags", "-of", "csv=p=0", str(path)],
        check=True, capture_output=True, text=True).stdout
    info = json.loads(streams)
    for s in info.get("streams", []):
        s.pop("extradata", None)
    info.get("format", {}).pop("filename", None)
    return (f"# {rel}\n## ffprobe -show_format -show_streams\n{json.dumps(info, indent=2)}\n"
            f"## packets of v:0 (pts,dts,duration,flags)\n{packets}")


def versions() -> dict:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for p in ("lerobot", "datasets", "pyarrow", "pandas", "av", "torch", "torchvision",
              "torchcodec", "numpy", "huggingface-hub"):
        try:
            out[p] = md.version(p)
        except md.PackageNotFoundError:
            out[p] = None
    import av

    out["av FFmpeg libraries (bundled in the av wheel)"] = {
        k: ".".join(map(str, v)) for k, v in av.library_versions.items()}
    return out


def dump(root: Path, out: Path, label: str) -> None:
    """dump writes the text description of dataset root into out/label/."""
    dest = out / label
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    tree = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        tree.append(rel + "/" if p.is_dir() else f"{rel}  ({p.stat().st_size} bytes)")
    (dest / "tree.txt").write_text("\n".join(tree) + "\n")
    for name in ("info.json", "stats.json"):
        src = root / "meta" / name
        if src.exists():
            shutil.copyfile(src, dest / name)
    for p in sorted(root.rglob("*.parquet")):
        rel = p.relative_to(root).as_posix()
        (dest / (rel.replace("/", "__") + ".txt")).write_text(dump_parquet(p, rel))
    tasks = root / "meta" / "tasks.parquet"
    if tasks.exists():
        (dest / "meta__tasks.pandas.txt").write_text(dump_tasks_pandas(tasks))
    for p in sorted(root.rglob("*.mp4")):
        rel = p.relative_to(root).as_posix()
        (dest / (rel.replace("/", "__") + ".ffprobe.txt")).write_text(dump_video(p, rel))
    (dest / "versions.json").write_text(json.dumps(versions(), indent=2) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--root", required=True, type=Path, help="dataset root to create (must not exist)")
    ap.add_argument("--vcodec", default="libsvtav1", help="libsvtav1, h264 or none")
    ap.add_argument("--dump", type=Path, help="reference directory to write the text dump into")
    ap.add_argument("--label", help="sub-directory name of the dump (default: the codec)")
    ap.add_argument("--existing", action="store_true",
                    help="dump the dataset already at --root (e.g. an exporter shard) instead of building one")
    args = ap.parse_args()
    vcodec = None if args.vcodec == "none" else args.vcodec
    if args.existing:
        if not args.dump:
            ap.error("--existing needs --dump")
        dump(args.root, args.dump, args.label or args.root.name)
        return 0
    build(args.root, vcodec)
    if args.dump:
        dump(args.root, args.dump, args.label or (args.vcodec if vcodec else "no-video"))
    print(f"make_reference: wrote {args.root} (vcodec={args.vcodec})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
