#!/usr/bin/env bash
# find-python.sh prints the newest Python interpreter at or above a minimum
# version (default 3.12) that can create a venv, or prints nothing and exits 1
# when there is none. It looks at pyenv's installed versions ($(pyenv root),
# or $PYENV_ROOT, or ~/.pyenv) and at python3.N, python3 and python on PATH.
#
# Usage: bash tests/conformance/find-python.sh [MIN]     e.g. 3.12
set -uo pipefail

min="${1:-3.12}"
candidates=()
root="${PYENV_ROOT:-}"
if [ -z "$root" ] && command -v pyenv >/dev/null 2>&1; then
	root="$(pyenv root 2>/dev/null || true)"
fi
[ -z "$root" ] && root="$HOME/.pyenv"
for p in "$root"/versions/*/bin/python3; do
	[ -x "$p" ] && candidates+=("$p")
done
for n in $(seq 30 -1 0); do
	p="$(command -v "python3.$n" 2>/dev/null)" && candidates+=("$p")
done
for name in python3 python; do
	p="$(command -v "$name" 2>/dev/null)" && candidates+=("$p")
done

best="" best_key=""
for p in "${candidates[@]}"; do
	# The interpreter itself says its version (a pyenv shim of a version that
	# is not active fails here) and whether it has venv with ensurepip.
	key="$("$p" - "$min" 2>/dev/null <<'PY'
import sys, importlib.util
want = tuple(int(x) for x in sys.argv[1].split("."))
if sys.version_info[:2] >= want and importlib.util.find_spec("venv") and importlib.util.find_spec("ensurepip"):
    print("%03d.%03d.%03d" % sys.version_info[:3])
PY
)" || continue
	if [ -n "$key" ] && [[ "$key" > "$best_key" ]]; then
		best="$p" best_key="$key"
	fi
done
[ -n "$best" ] || exit 1
echo "$best"
