#!/usr/bin/env bash
# setup.sh creates, once, the Python virtual environment the conformance check
# runs LeRobot in: .cache/conformance-venv under the repository root, holding
# exactly the packages pinned in tests/conformance/requirements.txt (all from
# PyPI). The venv is re-created only when requirements.txt or the Python
# version changes: a stamp file inside the venv records their hash.
#
# Usage: bash tests/conformance/setup.sh        (prints the venv's python path last)
# Env:   CONFORMANCE_VENV  override the venv location
#        PYTHON            interpreter to build the venv from (default python3)
#        CONFORMANCE_REQUIREMENTS  the package set (default requirements.txt,
#                          LeRobot 0.4.4; run06.sh passes requirements-0.6.txt)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${CONFORMANCE_VENV:-$root/.cache/conformance-venv}"
python="${PYTHON:-python3}"
req="${CONFORMANCE_REQUIREMENTS:-$here/requirements.txt}"
stamp="$venv/.ceres-conformance-stamp"

start=$(date +%s)
want="$( { "$python" -c 'import sys; print(sys.version)'; cat "$req"; } | sha256sum | cut -d' ' -f1)"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
	echo "conformance venv: up to date ($venv)" >&2
else
	echo "conformance venv: creating $venv from $req (downloads about 4 GB from PyPI, mostly torch and its CUDA runtime wheels)" >&2
	rm -rf "$venv"
	mkdir -p "$(dirname "$venv")"
	# A full disk otherwise shows up minutes later as pip's bare "[Errno 28]
	# No space left on device", naming neither the place nor the need. The
	# need is the installed venv plus the wheels pip holds in TMPDIR until
	# it has installed them all: measured at 10.9 GB for LeRobot 0.4.4's
	# (6.9 GB installed) and 7.5 GB for 0.6.1's (4.7 GB installed), both on
	# one file system (README.md, "Conformance").
	need_mb="${CONFORMANCE_VENV_FREE_MB:-12000}"
	for dir in "$(dirname "$venv")" "${TMPDIR:-/tmp}"; do
		free_mb=$(df -Pm "$dir" | awk 'NR == 2 { print $4 }')
		if [ "$free_mb" -lt "$need_mb" ]; then
			echo "conformance venv: $dir has $free_mb MB free; building the venv needs about $need_mb MB there (set CONFORMANCE_VENV, TMPDIR or CONFORMANCE_VENV_FREE_MB)" >&2
			exit 1
		fi
	done
	"$python" -m venv "$venv"
	# --no-deps: requirements.txt is the complete, resolved set (see its header);
	# resolving lerobot's own dependency list would add GBs of unused packages.
	# --no-cache-dir: the venv is built once and stamped, so a second copy of
	# every wheel in pip's cache would only double what the build leaves on disk.
	"$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --progress-bar off \
		--no-cache-dir --no-deps -r "$req" >&2
	echo "conformance venv: installed in $(( $(date +%s) - start ))s, $(du -sh "$venv" | cut -f1)" >&2
	# Prove the pieces the check relies on import before stamping the venv.
	HF_HUB_OFFLINE=1 "$venv/bin/python" - >&2 <<'PY'
import importlib.metadata as md
import av, pandas, pyarrow, datasets, torch, torchvision  # noqa: F401
import lerobot.datasets.lerobot_dataset  # noqa: F401
import lerobot.datasets.aggregate  # noqa: F401
print("conformance venv: " + ", ".join(
    f"{p} {md.version(p)}" for p in
    ("lerobot", "datasets", "pyarrow", "pandas", "av", "torch", "torchvision", "torchcodec")))
PY
	echo "$want" >"$stamp"
fi
echo "conformance venv: ready in $(( $(date +%s) - start ))s" >&2
echo "$venv/bin/python"
