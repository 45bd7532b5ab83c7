#!/usr/bin/env bash
# run.sh is the conformance check: LeRobot's own loader (lerobot
# 0.4.4 from PyPI, in the venv setup.sh makes) must read every shard our
# exporter writes, frame by frame, and merge two of them.
#
# 1. setup.sh: the cached venv (.cache/conformance-venv).
# 2. test_*.py: check.py's own helpers, setup.sh's free-disk refusal.
#    check.py --selftest: the checker passes on LeRobot-written datasets and
#    fails on corrupted copies of them (proves the checker).
# 3. The exporter matrix: synthesised sessions (retries, 0-3 cameras,
#    VP8/VP9/H.264 sources, a crash), exported to AV1 and H.264, a re-export
#    with a corrected specification, then check.py on every shard and a merge.
# 4. run06.sh: the same under the newest LeRobot (0.6.x), with its merge,
#    lerobot-edit-dataset and lerobot-doctor checks.
#
# Env: CERES_EXPORT   exporter binary (default bin/ceres-export)
#      CONFORMANCE_WORK scratch dir (default .cache/conformance-work, wiped)
#      CONFORMANCE_VERBOSE=1 Python tracebacks for loader failures
#      CONFORMANCE_VENV_06 the LeRobot 0.6 venv (default .cache/conformance-venv-0.6)
# Exit: 0 all passed; 1 a check failed.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
t_start=$(date +%s)
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
export PYTHONWARNINGS="${PYTHONWARNINGS:-ignore::UserWarning,ignore::FutureWarning,ignore::DeprecationWarning}"

echo "== conformance: venv"
py="$(bash "$here/setup.sh")"
work="${CONFORMANCE_WORK:-$root/.cache/conformance-work}"
rm -rf "$work"
mkdir -p "$work"
export HF_HOME="$work/hf-home"

failures=()
fail() {
	echo "FAIL: $*"
	failures+=("$*")
}

echo "== conformance: check.py's unit tests"
if ! PYTHONDONTWRITEBYTECODE=1 "$py" -m unittest discover -s "$here" -p 'test_*.py'; then
	fail "check.py unit tests"
fi

echo "== conformance: checker self-test on LeRobot's own output"
if ! "$py" "$here/check.py" --selftest --workdir "$work/selftest" 2>&1 | tee "$work/selftest.log" |
	grep -v -E '^(Svt\[|\[mp4 @|\[libx264 @|x264 \[)' ; then
	:
fi
if ! grep -q '^conformance selftest: .* PASS$' "$work/selftest.log"; then
	fail "checker self-test (see $work/selftest.log)"
fi

bin="${CERES_EXPORT:-$root/bin/ceres-export}"
if [ ! -x "$bin" ]; then
	fail "exporter binary $bin not found (run make build)"
	exit 1
fi

# Small sessions keep LeRobot's per-item decoding (it reopens the video for
# every item) within a few minutes for the whole matrix on 2 cores.
small=(--time-scale 0.1 --width 160 --height 120)

# synth NAME ARGS...: a synthetic session in $work/NAME-session.
synth() {
	local name=$1
	shift
	if ! "$bin" synth -o "$work/$name-session" "$@" >"$work/$name.synth.log" 2>&1; then
		fail "synth $name: $(tail -n 3 "$work/$name.synth.log")"
		return 1
	fi
}

# export NAME SESSION ARGS...: exports into $work/NAME (the shard), keeping
# the --json summary in $work/NAME.summary.json.
export_shard() {
	local name=$1 session=$2
	shift 2
	local rc=0
	"$bin" export "$session" -o "$work/$name" --json -q "$@" >"$work/$name.summary.json" 2>"$work/$name.export.log" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "export $name (exit $rc): $(tail -n 5 "$work/$name.export.log")"
		return 1
	fi
}

shards=()
# add_shard NAME: derive the expectations (cross-checked, see check.py expect).
add_shard() {
	local name=$1
	if ! "$py" "$here/check.py" expect "$work/$name" --summary "$work/$name.summary.json" -o "$work/$name.expect.json"; then
		fail "expectations of $name disagree (see above)"
	fi
	[ -f "$work/$name.expect.json" ] && shards+=("$work/$name=$work/$name.expect.json")
	return 0
}

echo "== conformance: exporting the matrix"
t_export=$(date +%s)
# 0, 1: two cameras, VP8 and VP9 sources, retries, AV1 out: merged below (same features).
synth s-vp8 --seed 11 --cameras 2 --camera-codec vp8 "${small[@]}" &&
	export_shard vp8-av1 "$work/s-vp8-session" --vcodec av1 && add_shard vp8-av1
synth s-vp9 --seed 12 --cameras 2 --camera-codec vp9 "${small[@]}" &&
	export_shard vp9-av1 "$work/s-vp9-session" --vcodec av1 && add_shard vp9-av1
# 2: H.264 source (B-frames) to H.264 output.
synth s-h264 --seed 13 --cameras 1 --camera-codec h264 "${small[@]}" &&
	export_shard h264-h264 "$work/s-h264-session" --vcodec h264 && add_shard h264-h264
# 3: three cameras, two files per camera (recorder restart), VP8 to H.264.
synth s-3cam --seed 14 --cameras 3 --camera-files 2 --camera-codec vp8 "${small[@]}" &&
	export_shard 3cam-h264 "$work/s-3cam-session" --vcodec h264 && add_shard 3cam-h264
# 4: a crashed recording (torn journal tail, incomplete last attempt).
synth s-crash --seed 15 --cameras 1 --camera-codec vp9 --fault crash "${small[@]}" &&
	export_shard crash-av1 "$work/s-crash-session" --vcodec av1 && add_shard crash-av1
# 5: no camera at all (fps from the first sensor stream, video_path null).
synth s-nocam --seed 16 --cameras 0 "${small[@]}" &&
	export_shard nocam "$work/s-nocam-session" && add_shard nocam
# 7: training-ready: the shipped synth profile (observation.state, action as
#    the next frame's state); check_profile.py has LeRobot load state and
#    action with their shapes and names and rebuild the dataset card, also
#    the card of a shard exported with a dataset licence (--license).
synth s-profile --seed 17 --cameras 2 "${small[@]}" &&
	export_shard profile "$work/s-profile-session" --profile "$root/profiles/synth.yaml" && add_shard profile &&
	export_shard profile-license "$work/s-profile-session" --profile "$root/profiles/synth.yaml" --license cc-by-4.0 &&
	{ "$py" "$here/check_profile.py" "$work/profile" --card "$work/profile-license" >"$work/profile.log" 2>&1 || true; grep -E '^(ok|FAIL|profile conformance)' "$work/profile.log"
		grep -q '^profile conformance: PASS$' "$work/profile.log" || fail "profile export (see $work/profile.log)"; }
# 6: re-export of session s-vp8 with a corrected specification, replacing a
#    first export in place (--replace); task strings must follow the new
#    instructions, and the episodes keep the recorded hash beside the new one.
if [ -d "$work/s-vp8-session" ]; then
	"$py" - "$work/fixed-spec.json" <<'PY'
import json, sys
spec = json.loads("""{
  "schema": "ceres-task-specification", "version": 1,
  "runTitle": "Sample transfer", "runDescription": "Move each sample into the rack",
  "cycleCount": 2,
  "tasks": [
    {"id": "pick", "type": "timed", "label": "Pick sample (corrected)",
     "instructions": "Pick exactly one sample from the tray", "durationS": 12.5,
     "repeatCount": 3, "resetTimeS": 5},
    {"id": "inspect", "type": "open", "label": "Inspect sample (corrected)",
     "instructions": "Inspect the sample until the check is complete",
     "repeatCount": 1, "resetTimeS": 5},
    {"id": "pause", "type": "pause", "label": "Inter-cycle pause",
     "instructions": "Wait", "durationS": 2}
  ]
}""")
json.dump(spec, open(sys.argv[1], "w"), indent=2)
PY
	if export_shard reexport "$work/s-vp8-session" --vcodec av1 &&
		export_shard reexport "$work/s-vp8-session" --vcodec av1 --replace --task-spec "$work/fixed-spec.json"; then
		add_shard reexport
		"$py" - "$work/reexport" "$work/fixed-spec.json" <<'PY' || fail "re-export provenance (see above)"
import json, sys
from pathlib import Path
import pyarrow.parquet as pq
shard, spec = Path(sys.argv[1]), json.load(open(sys.argv[2]))
want = {t["instructions"] for t in spec["tasks"] if t["type"] in ("timed", "open")}
rows = [r for f in sorted((shard / "meta/episodes").glob("*/*.parquet")) for r in pq.read_table(f).to_pylist()]
tasks = {t for r in rows for t in r["tasks"]}
bad = []
if not tasks <= want:
    bad.append(f"task strings {sorted(tasks)} are not the corrected instructions {sorted(want)}")
hashes = {(r.get("ceres/task_specification/hash"), r.get("ceres/task_specification/recorded_hash")) for r in rows}
if len(hashes) != 1 or any(h is None for h in next(iter(hashes))) or len(set(next(iter(hashes)))) != 2:
    bad.append(f"episodes should carry one new hash and a different recorded hash, got {hashes}")
else:
    new, old = next(iter(hashes))
    for h in (new, old):
        if not (shard / "ceres/task-specifications" / f"{h}.json").exists():
            bad.append(f"ceres/task-specifications/{h}.json missing")
for b in bad:
    print("FAIL re-export:", b)
print("ok   re-export: tasks follow the corrected specification; hash/recorded_hash kept" if not bad else "")
sys.exit(1 if bad else 0)
PY
	fi
fi

# 8: colour: a still scene recorded full range (as Chromium records VP9 and
#    AV1, and H.264 as yuvj420p) and limited range, exported with each
#    encoder; colour_check.py has LeRobot decode each (both backends) and
#    compares the RGB with the ffmpeg command line's reading of the source
#    (with the range and matrix the source's stream states: for VP8 the
#    WebM's, since FFmpeg's VP8 decoder labels every frame limited range).
colour=()
for c in "vp8-full vp8 --camera-full-range" "vp9-full vp9 --camera-full-range" "av1-full av1 --camera-full-range" "h264-full h264 --camera-full-range" "vp9-limited vp9"; do
	read -r cname ccodec cflags <<<"$c"
	synth "colour-$cname" --seed 21 --cameras 1 --camera-codec "$ccodec" $cflags --camera-scene still "${small[@]}" || continue
	for vcodec in av1 h264; do
		export_shard "colour-$cname-$vcodec" "$work/colour-$cname-session" --vcodec "$vcodec" &&
			colour+=("$work/colour-$cname-$vcodec=$(find "$work/colour-$cname-session/media" -type f | sort | head -n 1)")
	done
done
echo "== conformance: LeRobot decodes ${#colour[@]} shards to the colours recorded"
if [ ${#colour[@]} -ne 10 ]; then
	fail "colour: ${#colour[@]} of 10 shards exported"
elif ! "$py" "$here/colour_check.py" "${colour[@]}" 2>&1 | tee "$work/colour.log" | grep -E '^(ok|FAIL|colour conformance)'; then
	fail "colour (see $work/colour.log)"
elif ! grep -q '^colour conformance: PASS$' "$work/colour.log"; then
	fail "colour (see $work/colour.log)"
fi
echo "== conformance: exported $(( ${#shards[@]} )) shards in $(($(date +%s) - t_export))s"

# Merge the two shards with equal features (0 and 1); and the re-export with
# the VP9 shard: tasks of both specifications are unified by string.
merges=()
pos() {
	local i
	for i in "${!shards[@]}"; do
		if [[ ${shards[$i]} == "$work/$1="* ]]; then echo "$i"; fi
	done
	return 0
}
p0=$(pos vp8-av1) p1=$(pos vp9-av1) p6=$(pos reexport)
[ -n "$p0" ] && [ -n "$p1" ] && merges+=(--merge "$p0,$p1")
[ -n "$p6" ] && [ -n "$p1" ] && merges+=(--merge "$p6,$p1")

echo "== conformance: LeRobot reads ${#shards[@]} exporter shards"
if [ ${#shards[@]} -eq 0 ]; then
	fail "no exporter shard to check"
elif ! "$py" "$here/check.py" --workdir "$work/check" "${merges[@]}" "${shards[@]}" 2>&1 | tee "$work/check.log" |
	grep -v -E '^(Svt\[|\[mp4 @|\[libx264 @|x264 \[)'; then
	:
fi
grep -q '^conformance summary: .*: PASS$' "$work/check.log" 2>/dev/null || fail "LeRobot conformance of exporter shards (see $work/check.log)"

# The newest LeRobot (0.6.x) on the same shards, plus its own merge, edit
# and lint checks; skipped, saying so, where no Python >= 3.12 exists.
echo "== conformance: LeRobot 0.6"
bash "$here/run06.sh" "$work" "$bin" "${merges[@]}" "${shards[@]}" 2>&1 | tee "$work/lerobot-0.6.log" |
	grep -v -E '^(Svt\[|\[mp4 @|\[libx264 @|x264 \[)' || true
# A skip for want of Python 3.12 counts as a failure under
# CERES_TEST_NO_SKIP=1 (.ci/run sets it), as a skipped Go test does.
accept='PASS|SKIPPED'
[ "${CERES_TEST_NO_SKIP:-}" = 1 ] && accept='PASS'
grep -q -E "^conformance 0.6: ($accept)" "$work/lerobot-0.6.log" ||
	fail "LeRobot 0.6 conformance (see $work/lerobot-0.6.log)"

# ceres-export merge against LeRobot's own merge of the same shards
# (merge_check.py): LeRobot reads the merged dataset fully, and its content
# equals what aggregate_datasets makes of the shards. Two cameras, a crash.
echo "== conformance: ceres-export merge against LeRobot's aggregate_datasets"
tiny=(--time-scale 0.05 --width 160 --height 120 --cameras 2)
if synth m-a --seed 31 "${tiny[@]}" && export_shard merge-a "$work/m-a-session" --vcodec h264 &&
	synth m-b --seed 32 --fault crash "${tiny[@]}" && export_shard merge-b "$work/m-b-session" --vcodec h264; then
	if "$bin" merge "$work/merge-a" "$work/merge-b" -o "$work/ceres-merged" >"$work/merge.log" 2>&1; then
		"$py" "$here/merge_check.py" --merged "$work/ceres-merged" --workdir "$work/merge-check" \
			"$work/merge-a" "$work/merge-b" 2>&1 | tee "$work/merge-check.log" |
			grep -v -E '^(Svt\[|\[mp4 @|\[libx264 @|x264 \[|\[libdav1d)' || true
		grep -q '^merge-check summary: .*: PASS$' "$work/merge-check.log" ||
			fail "ceres-export merge vs LeRobot's merge (see $work/merge-check.log)"
	else
		fail "ceres-export merge: $(tail -n 5 "$work/merge.log")"
	fi
	# The same dataset grown by appends (merge --into): each append links
	# the meta/episodes files there and adds one of its own, so LeRobot
	# reads episodes from several files; its content must still equal
	# aggregate_datasets of the three shards.
	echo "== conformance: merge --into (two appends) against LeRobot's aggregate_datasets"
	if synth m-c --seed 33 "${tiny[@]}" && export_shard merge-c "$work/m-c-session" --vcodec h264 &&
		"$bin" merge "$work/merge-a" -o "$work/ceres-appended" >"$work/append.log" 2>&1 &&
		"$bin" merge "$work/merge-b" --into "$work/ceres-appended" >>"$work/append.log" 2>&1 &&
		"$bin" merge "$work/merge-c" --into "$work/ceres-appended" >>"$work/append.log" 2>&1; then
		files=$(find "$work/ceres-appended/meta/episodes" -name '*.parquet' | wc -l)
		[ "$files" -ge 3 ] || fail "merge --into: $files meta/episodes file(s), want one per merge and append"
		"$py" "$here/merge_check.py" --merged "$work/ceres-appended" --workdir "$work/append-check" \
			"$work/merge-a" "$work/merge-b" "$work/merge-c" 2>&1 | tee "$work/append-check.log" |
			grep -v -E '^(Svt\[|\[mp4 @|\[libx264 @|x264 \[|\[libdav1d)' || true
		grep -q '^merge-check summary: .*: PASS$' "$work/append-check.log" ||
			fail "ceres-export merge --into vs LeRobot's merge (see $work/append-check.log)"
	else
		fail "ceres-export merge --into: $(tail -n 5 "$work/append.log")"
	fi
fi

secs=$(($(date +%s) - t_start))
echo
echo "== conformance result"
grep -h -E '^conformance (selftest|summary):' "$work/selftest.log" "$work/check.log" 2>/dev/null || true
grep -h -E '^conformance 0.6: (PASS|FAIL|SKIPPED)' "$work/lerobot-0.6.log" 2>/dev/null || true
grep -h -E '^merge-check summary:' "$work/merge-check.log" "$work/append-check.log" 2>/dev/null || true
if [ ${#failures[@]} -eq 0 ]; then
	echo "conformance: PASS (${#shards[@]} exporter shards, total ${secs}s)"
	exit 0
fi
echo "conformance: FAIL (${#failures[@]} problem(s), total ${secs}s)"
for f in "${failures[@]}"; do echo "  - $f"; done
exit 1
