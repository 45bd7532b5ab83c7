"""colour_check.py: LeRobot's own decoder returns the colours the camera
recorded, whatever range the camera file was recorded in.

Each argument is SHARD=SOURCE: a shard exported from a session whose one
camera shows a still scene (synth --camera-scene still), and that camera's
file. The reference is the source file's first frame turned into RGB by the
ffmpeg command line (not our code), with the range and matrix the source's
stream states, as ffprobe reads them (for VP8 that is the WebM's Colour
element: FFmpeg's VP8 decoder labels every frame limited range); every frame sampled from the shard through
LeRobotDataset, with each video backend that decodes here, must match it:

  per channel, the mean within MEAN_BOUND levels and the spread (standard
  deviation) within SPREAD_BOUND of the reference's (a range error stretches
  or squeezes the spread: full-range levels read as limited give about
  1.16); the mean absolute error per pixel within MAE_BOUND levels
  (compression costs some; a range error costs about 10).

Prints one line per shard and backend with the figures; exit 1 if any is
out of bounds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Measured (2026-12-06, 160x120 still scene, AV1 and H.264 out): true
# exports within 1.93 levels in mean, 0.957-1.005 in spread, 2.2-5.3 levels
# mean absolute error; full-range sources exported as limited before the
# conversion existed: 1.05-1.17 in spread, means up to 5 levels off. The
# pyav backend reads the BT.709 matrix an export keeps as BT.601 (it ignores
# the tag), hence its larger, still small, error; torchcodec honours it.
MEAN_BOUND = 2.5  # levels of 255
SPREAD_BOUND = 0.06  # |std ratio - 1|
MAE_BOUND = 6.0  # levels of 255


def stated_colour(source: Path) -> str:
    """stated_colour is the scale filter's input settings for what the
    source's stream says (for VP8, the container: FFmpeg's VP8 decoder
    labels every frame limited range BT.601 whatever the WebM says)."""
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=color_range,color_space",
         "-of", "default=noprint_wrappers=1", str(source)], check=True, capture_output=True, text=True).stdout
    said = dict(line.split("=", 1) for line in out.split())
    opts = []
    if said.get("color_range") in ("pc", "tv"):
        opts.append("in_range=" + ("full" if said["color_range"] == "pc" else "limited"))
    if said.get("color_space") in ("bt709", "bt470bg", "smpte170m"):
        opts.append("in_color_matrix=" + ("bt709" if said["color_space"] == "bt709" else "bt601"))
    return "scale=" + ":".join(opts) if opts else "null"


def reference_rgb(source: Path, width: int, height: int):
    import numpy as np

    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(source), "-frames:v", "1", "-vf", stated_colour(source),
         "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True).stdout
    if len(raw) != width * height * 3:
        raise SystemExit(f"{source}: ffmpeg gave {len(raw)} bytes, want {width}x{height} rgb24")
    return np.frombuffer(raw, dtype=np.uint8).reshape(height, width, 3).astype(np.float64)


def backends() -> list[str]:
    out = ["pyav"]
    try:
        import torchcodec.decoders  # noqa: F401
        out.append("torchcodec")
    except Exception:  # noqa: BLE001 - unavailable here: check.py reports why
        pass
    return out


def check(shard: Path, source: Path, backend: str) -> tuple[bool, str]:
    import numpy as np
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset(f"ceres/{shard.name}", root=shard, video_backend=backend)
    keys = ds.meta.video_keys
    if len(keys) != 1:
        return False, f"{shard}: {len(keys)} cameras, want 1"
    key = keys[0]
    n = len(ds)
    sample = sorted({0, n // 3, 2 * n // 3, n - 1})
    got = np.stack([ds[i][key].numpy().transpose(1, 2, 0) * 255.0 for i in sample])
    ref = reference_rgb(source, got.shape[2], got.shape[1])
    worst = []
    ok = True
    for c, name in enumerate("RGB"):
        g, r = got[..., c], ref[..., c]
        dmean = g.mean() - r.mean()
        ratio = g.std() / r.std()
        if abs(dmean) > MEAN_BOUND or abs(ratio - 1) > SPREAD_BOUND:
            ok = False
        worst.append(f"{name} mean {dmean:+.2f} spread x{ratio:.3f}")
    mae = float(np.abs(got - ref[None]).mean())
    if mae > MAE_BOUND:
        ok = False
    return ok, f"{len(sample)} frames: {', '.join(worst)}, mean abs error {mae:.2f}"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    failed = 0
    for arg in argv:
        shard, _, source = arg.partition("=")
        for backend in backends():
            ok, what = check(Path(shard), Path(source), backend)
            print(f"{'ok  ' if ok else 'FAIL'} colour {Path(shard).name} [{backend}]: {what}")
            failed += not ok
    print(f"colour conformance: {'PASS' if not failed else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
