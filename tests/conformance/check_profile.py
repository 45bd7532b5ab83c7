"""check_profile.py: a shard exported with a feature profile is what LeRobot
trains on, read by LeRobot's own code.

    python check_profile.py SHARD

1. LeRobotDataset loads the shard; observation.state and action have the
   dtype, shape and names of meta/info.json, and the names the stored
   profile (ceres/profile.json) declares.
2. Every item's observation.state and action are tensors of that shape; a
   delta_timestamps window on action ([0, 1/fps]) loads, padded past an
   episode's end.
3. For a profile whose action is `next: observation.state`: in every
   episode, action[k] == observation.state[k+1] and the last frame's action
   is its own state (docs/profiles.md).
4. README.md is byte for byte what LeRobot's create_lerobot_dataset_card
   writes for this info.json, with our description, tags and licence (the
   card data's license, passed as license=; none when the card has none).

    python check_profile.py SHARD --card LICENSED_SHARD [--card ...]

also checks 4. on each further shard (an export with --license: the card
LeRobot writes with license=ID).

Prints "ok ..." lines and "profile conformance: PASS|FAIL"; exit 1 on FAIL.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> int:
    args = sys.argv[1:]
    root = Path(args[0])
    card_only: list[Path] = []
    rest = args[1:]
    while rest:
        if rest[0] != "--card" or len(rest) < 2:
            print(f"usage: check_profile.py SHARD [--card SHARD]...; got {rest}")
            return 2
        card_only.append(Path(rest[1]))
        rest = rest[2:]
    failures: list[str] = []

    def fail(msg: str) -> None:
        print("FAIL", msg)
        failures.append(msg)

    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    info = json.loads((root / "meta/info.json").read_text())
    profile = json.loads((root / "ceres/profile.json").read_text())
    declared = {f["name"]: f for f in profile["features"]}
    fps = info["fps"]
    ds = LeRobotDataset("ceres/profile-check", root=root, video_backend="pyav",
                        delta_timestamps={"action": [0.0, 1.0 / fps]})
    for key in ("observation.state", "action"):
        if key not in ds.meta.features:
            fail(f"LeRobot sees no {key} feature")
            continue
        got, want = ds.meta.features[key], info["features"][key]
        if tuple(got["shape"]) != tuple(want["shape"]) or list(got["names"]) != list(want["names"]):
            fail(f"{key}: LeRobot reads shape {got['shape']} names {got['names']}, info.json has {want['shape']} {want['names']}")
        names = declared.get(key, {}).get("names") or declared.get(declared.get(key, {}).get("next", ""), {}).get("names")
        if names and list(got["names"]) != names:
            fail(f"{key}: names {got['names']}, the profile declares {names}")
        print(f"ok   {key}: {got['dtype']} {tuple(got['shape'])} names {list(got['names'])}")
    if failures:
        return finish(failures)

    width = info["features"]["observation.state"]["shape"][0]
    # Every row at once, as LeRobot's own hf_dataset holds them.
    cols = ds.hf_dataset.with_format("numpy")[:]
    state = torch.as_tensor(cols["observation.state"]).reshape(-1, width)
    action = torch.as_tensor(cols["action"]).reshape(-1, width)
    episodes = torch.as_tensor(cols["episode_index"])
    if declared.get("action", {}).get("next") == "observation.state":
        bad = 0
        for e in sorted(set(episodes.tolist())):
            rows = (episodes == e).nonzero().flatten()
            s, a = state[rows], action[rows]
            want = torch.cat([s[1:], s[-1:]])
            if not torch.equal(a, want):
                k = int((a != want).any(dim=-1).nonzero()[0])
                fail(f"episode {e}: action[{k}] is {a[k].tolist()}, want observation.state[{min(k + 1, len(rows) - 1)}] {want[k].tolist()}")
                bad += 1
        if not bad:
            print(f"ok   action is the next frame's state in all {len(set(episodes.tolist()))} episodes; the last frame's is its own")

    n = len(ds)
    for i in sorted({0, n // 2, n - 1}):
        item = ds[i]
        if tuple(item["observation.state"].shape) != (width,) or tuple(item["action"].shape) != (2, width):
            fail(f"item {i}: observation.state {tuple(item['observation.state'].shape)}, action window {tuple(item['action'].shape)}; want ({width},) and (2, {width})")
    last = ds.meta.episodes[0]["dataset_to_index"] - 1
    item = ds[last]
    if not bool(item["action_is_pad"][1]) or bool(item["action_is_pad"][0]):
        fail(f"item {last} (the first episode's last frame): action_is_pad {item['action_is_pad'].tolist()}, want [False, True]")
    else:
        print(f"ok   items load with state ({width},) and an action window (2, {width}), padded past an episode's end")

    check_card(root, ds.meta.info, fail)
    if card_only:
        from lerobot.datasets.lerobot_dataset import LeRobotDatasetMetadata
        for shard in card_only:
            check_card(shard, LeRobotDatasetMetadata("ceres/card-check", root=shard).info, fail)
    return finish(failures)


def check_card(root: Path, info, fail) -> None:
    """README.md at root is LeRobot's create_lerobot_dataset_card for info,
    with the card's own tags, description and licence."""
    import lerobot
    from lerobot.datasets.utils import create_lerobot_dataset_card

    ours = (root / "README.md").read_text()
    head, sep, rest = ours.partition("## Dataset Description\n\n")
    desc = rest.split("\n\n- **Homepage:**", 1)[0]
    front = head.split("---\n")[1]
    tags = [line[2:] for line in front.split("tags:\n", 1)[1].split("configs:", 1)[0].splitlines()]
    kwargs = {}
    for line in front.splitlines():
        if line.startswith("license: "):
            kwargs["license"] = line[len("license: "):]
    card = str(create_lerobot_dataset_card(tags=tags[1:], dataset_info=info, dataset_description=desc, **kwargs))
    def normalised(text: str) -> str:
        # LeRobot 0.6 embeds DatasetInfo.to_dict(), whose key order is its
        # dataclass's, not info.json's: compare the block as data there.
        pre, _, post = text.partition("```json\n")
        block, _, tail = post.partition("\n```\n")
        return pre + json.dumps(json.loads(block), sort_keys=True) + tail
    version = getattr(lerobot, "__version__", "?")
    licence = f" with license={kwargs['license']}" if kwargs else " without a licence"
    if sep and card != ours and not version.startswith("0.4") and normalised(card) == normalised(ours):
        print(f"ok   {root.name}/README.md is LeRobot {version}'s dataset card for this info.json{licence} (its embedded info.json in DatasetInfo key order)")
    elif not sep or card != ours:
        import difflib
        diff = "".join(list(difflib.unified_diff(card.splitlines(True), ours.splitlines(True), "lerobot", "ours"))[:40])
        fail(f"{root.name}/README.md is not LeRobot's dataset card for this info.json{licence}:\n{diff}")
    else:
        print(f"ok   {root.name}/README.md is LeRobot's create_lerobot_dataset_card output{licence} ({len(ours)} bytes)")


def finish(failures: list[str]) -> int:
    print("profile conformance:", "FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
