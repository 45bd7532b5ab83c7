#!/usr/bin/env bash
# run06.sh is the LeRobot 0.6 part of the conformance check (run.sh calls
# it with the matrix it exported): the newest LeRobot release, in its own
# venv on the newest Python >= 3.12 the machine has, must
#   1. pass check.py's self-test on datasets its own writer made;
#   2. read every shard of the matrix (check.py: both video backends with the
#      same pixels, delta windows, no warning while loading, one row group
#      per episode) and do run.sh's merges;
#   3. merge two shards holding every dtype the exporter writes with a
#      dataset its own writer made, for AV1 and for H.264 (merge06.py);
#   4. run lerobot-edit-dataset on a shard (edit06.py), then have
#      ceres-export merge take LeRobot's own datasets as sources: the twin
#      its writer made and the shard its delete rewrote, beside a shard of
#      ours; the result verifies sound and LeRobot reads every frame of it
#      equal to its source's (foreign06.py);
#   5. pass lerobot-doctor --ci on every shard (doctor.py), among them an
#      export with the shipped profile (profiles/synth.yaml), where it exists;
#   6. find no error with lerobot-lint in make demo's dataset (an arm
#      session, profiles/synth-arm.yaml);
#   7. take ceres-export merge's dataset of two arm exports as its own
#      aggregate_datasets makes it (merge_check.py: every item, stats.json to
#      1e-9), and train ACT on it from scratch with lerobot-train: a few
#      steps, checkpoints, and --resume continuing from the last one.
# Where no Python >= 3.12 exists it says so and exits 0 (0.4.4 ran alone).
#
# Usage: run06.sh WORK EXPORTER [--merge A,B ...] SHARD=EXPECT.json ...
# Env:   CONFORMANCE_VENV_06  the venv (default .cache/conformance-venv-0.6)
# Exit:  0 passed or skipped; 1 a check failed.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$1/lerobot-0.6"
bin="$2"
shift 2
t_start=$(date +%s)
rm -rf "$work"
mkdir -p "$work"
export HF_HOME="$work/hf-home"

if ! python="$(bash "$here/find-python.sh" 3.12)"; then
	echo "conformance 0.6: SKIPPED: no Python >= 3.12 on this machine (pyenv or python3.N on PATH); LeRobot 0.4.4 ran alone"
	exit 0
fi
echo "== conformance 0.6: venv on $python ($("$python" -V 2>&1))"
if ! py="$(CONFORMANCE_VENV="${CONFORMANCE_VENV_06:-$root/.cache/conformance-venv-0.6}" PYTHON="$python" \
	CONFORMANCE_REQUIREMENTS="$here/requirements-0.6.txt" bash "$here/setup.sh")"; then
	echo "conformance 0.6: FAIL: could not build the venv"
	exit 1
fi

failures=()
fail() {
	echo "FAIL: $*"
	failures+=("$*")
}
quiet() { grep -v -E '^(Svt\[|\[mp4 @|\[libx264 @|x264 \[)'; }

echo "== conformance 0.6: checker self-test on LeRobot 0.6's own output"
"$py" "$here/check.py" --selftest --workdir "$work/selftest" 2>&1 | tee "$work/selftest.log" | quiet
grep -q '^conformance selftest: .* PASS$' "$work/selftest.log" || fail "0.6 checker self-test (see $work/selftest.log)"

# Shards holding every dtype the exporter writes (synth --all-dtypes, float64
# kept), two sessions per codec: merged with each other and a LeRobot twin.
small=(--time-scale 0.1 --width 160 --height 120 --cameras 1 --all-dtypes)
dtype_shards=()
for codec in av1 h264; do
	for seed in 31 32; do
		name="dtypes-$codec-$seed"
		if "$bin" synth -o "$work/$name-session" --seed $seed "${small[@]}" >"$work/$name.log" 2>&1 &&
			"$bin" export "$work/$name-session" -o "$work/$name" --vcodec $codec --keep-float64 --json -q \
				>"$work/$name.summary.json" 2>>"$work/$name.log" &&
			"$py" "$here/check.py" expect "$work/$name" --summary "$work/$name.summary.json" -o "$work/$name.expect.json"; then
			# check.py reads one per codec; merge06.py reads every frame of all four.
			[ $seed = 31 ] && dtype_shards+=("$work/$name=$work/$name.expect.json")
		else
			fail "export $name (see $work/$name.log)"
		fi
	done
done

# A training-ready export: the shipped synth profile (observation.state and
# action); lerobot-doctor must find no FAIL in it.
profile="$root/profiles/synth.yaml"
if [ -f "$profile" ]; then
	name=profile-av1
	if "$bin" synth -o "$work/$name-session" --seed 33 --time-scale 0.1 --width 160 --height 120 >"$work/$name.log" 2>&1 &&
		"$bin" export "$work/$name-session" -o "$work/$name" --profile "$profile" --json -q \
			>"$work/$name.summary.json" 2>>"$work/$name.log" &&
		"$py" "$here/check.py" expect "$work/$name" --summary "$work/$name.summary.json" -o "$work/$name.expect.json"; then
		dtype_shards+=("$work/$name=$work/$name.expect.json")
	else
		fail "export $name with $profile (see $work/$name.log)"
	fi
else
	echo "note: no profiles/synth.yaml: no training-ready export to check"
fi

matrix=0
for s in "$@"; do [[ $s == *=* ]] && matrix=$((matrix + 1)); done
echo "== conformance 0.6: LeRobot 0.6 reads $((matrix + ${#dtype_shards[@]})) shards"
"$py" "$here/check.py" --workdir "$work/check" "$@" "${dtype_shards[@]}" 2>&1 | tee "$work/check.log" | quiet
grep -q '^conformance summary: .*: PASS$' "$work/check.log" || fail "0.6 reads of exporter shards (see $work/check.log)"

for codec in av1 h264; do
	echo "== conformance 0.6: merge of two $codec shards of every dtype with a LeRobot-written twin"
	# H.264: LeRobot's file first (its concatenation fails the other way round, FINDINGS.md).
	order=()
	[ $codec = h264 ] && order=(--twin-first)
	"$py" "$here/merge06.py" --workdir "$work/merge-$codec" "${order[@]}" "$work/dtypes-$codec-31" "$work/dtypes-$codec-32" 2>&1 |
		tee "$work/merge-$codec.log" | quiet
	[ "${PIPESTATUS[0]}" -eq 0 ] || fail "0.6 merge with a LeRobot-written dataset, $codec (see $work/merge-$codec.log)"
done

echo "== conformance 0.6: lerobot-edit-dataset on a shard"
"$py" "$here/edit06.py" --workdir "$work/edit" "$work/dtypes-av1-31" 2>&1 | tee "$work/edit.log" | quiet
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "0.6 lerobot-edit-dataset (see $work/edit.log)"

echo "== conformance 0.6: ceres-export merge of a shard with LeRobot-written and LeRobot-edited datasets"
"$py" "$here/foreign06.py" --ceres-export "$bin" --workdir "$work/foreign" \
	"$work/dtypes-av1-31" "$work/merge-av1/twin-of-dtypes-av1-31" "$work/edit/deleted" 2>&1 | tee "$work/foreign.log" | quiet
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "0.6 foreign sources in ceres-export merge (see $work/foreign.log)"

echo "== conformance 0.6: lerobot-doctor --ci on every shard"
all=()
for s in "$@" "${dtype_shards[@]}"; do
	[[ $s == --merge ]] || [[ $s != *=* ]] || all+=("${s%%=*}")
done
all+=("$work/dtypes-av1-32" "$work/dtypes-h264-32")
"$py" "$here/doctor.py" --doctor "$(dirname "$py")/lerobot-doctor" --findings "$here/FINDINGS.md" "${all[@]}" 2>&1 |
	tee "$work/doctor.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "lerobot-doctor (see $work/doctor.log)"

echo "== conformance 0.6: lerobot-lint on make demo's dataset"
if make -C "$root" --no-print-directory demo DEMO_DIR="$work/demo" BIN="$bin" >"$work/demo.log" 2>&1; then
	"$(dirname "$py")/lelint" check "$work/demo/shard" --json "$work/lint.json" >"$work/lint.log" 2>&1
	lint_rc=$?
	summary=$("$py" -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]; print(s["errors"], s["warnings"], s["info"])' "$work/lint.json" 2>/dev/null)
	read -r errors warnings infos <<<"${summary:-? ? ?}"
	if [ "$lint_rc" -ge 2 ] || [ "$errors" != 0 ]; then
		fail "lerobot-lint on make demo's dataset: exit $lint_rc, $errors errors (see $work/lint.log)"
	else
		echo "ok   lerobot-lint $("$py" -c 'import importlib.metadata as m; print(m.version("lerobot-lint"))'): $errors errors, $warnings warnings, $infos info (exit $lint_rc)"
	fi
else
	fail "make demo (see $work/demo.log)"
fi

echo "== conformance 0.6: merge of two arm exports against aggregate_datasets, then lerobot-train"
arm=()
for seed in 41 42; do
	name="arm-$seed"
	if "$bin" synth -o "$work/$name-session" --seed $seed --time-scale 0.2 --width 160 --height 120 --cameras 1 --motion arm >"$work/$name.log" 2>&1 &&
		"$bin" export "$work/$name-session" -o "$work/$name" --profile "$root/profiles/synth-arm.yaml" -q >>"$work/$name.log" 2>&1; then
		arm+=("$work/$name")
	else
		fail "export $name (see $work/$name.log)"
	fi
done
train="$work/train"
if [ ${#arm[@]} -eq 2 ] && "$bin" merge "${arm[@]}" -o "$work/arm-merged" >"$work/arm-merge.log" 2>&1; then
	"$py" "$here/merge_check.py" --merged "$work/arm-merged" --workdir "$work/arm-merge-check" "${arm[@]}" 2>&1 |
		tee "$work/arm-merge-check.log" | quiet | grep -E '^(ok   merge|FAIL|merge-check summary)'
	grep -q '^merge-check summary: .*: PASS$' "$work/arm-merge-check.log" ||
		fail "0.6 aggregate_datasets against our merge (see $work/arm-merge-check.log)"
	# ACT from scratch (no pretrained backbone: the run is offline), on CPU.
	lt="$(dirname "$py")/lerobot-train"
	if "$lt" --dataset.repo_id=local/arm-merged --dataset.root="$work/arm-merged" --policy.type=act --policy.device=cpu \
		--policy.push_to_hub=false --policy.pretrained_backbone_weights=null --steps=4 --batch_size=2 --save_freq=2 \
		--log_freq=1 --num_workers=0 --wandb.enable=false --output_dir="$train" >"$work/train.log" 2>&1 &&
		[ -d "$train/checkpoints/000004/pretrained_model" ] &&
		"$lt" --config_path="$train/checkpoints/last/pretrained_model/train_config.json" --resume=true --steps=6 \
			>"$work/train-resume.log" 2>&1 &&
		[ -d "$train/checkpoints/000006/pretrained_model" ] && grep -q 'step:5 ' "$work/train-resume.log"; then
		echo "ok   lerobot-train: ACT, 4 steps from scratch on the merged dataset, checkpoints $(ls "$train/checkpoints" | grep -v last | tr '\n' ' ')after --resume to step 6; $(grep -o 'step:4 .*loss:[0-9.]*' "$work/train.log" | head -1 | grep -o 'loss:[0-9.]*' | head -1) at step 4"
	else
		fail "lerobot-train on the merged arm dataset (see $work/train.log, $work/train-resume.log)"
	fi
else
	fail "merge of the arm exports (see $work/arm-merge.log)"
fi

secs=$(($(date +%s) - t_start))
if [ ${#failures[@]} -eq 0 ]; then
	echo "conformance 0.6: PASS (lerobot $("$py" -c 'import importlib.metadata as m; print(m.version("lerobot"))'), ${secs}s)"
	exit 0
fi
echo "conformance 0.6: FAIL (${#failures[@]} problem(s), ${secs}s)"
for f in "${failures[@]}"; do echo "  - $f"; done
exit 1
