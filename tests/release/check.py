#!/usr/bin/env python3
"""Helpers of tests/release/run.sh (standard library only).

    check.py tree LEFT RIGHT          compare two output trees byte for byte
    check.py elf FILE                 print "ARCH static|dynamic" of an ELF executable
    check.py oci ARCHIVE PATH         print the image config of an oci-archive as JSON,
                                      with "file_sha256" the sha256 of PATH in its layers

tree exits 1 when the trees differ and says, for every file that differs,
how: only on one side, sizes, sha256 on each side, the first differing byte,
and for text files the first lines of a unified diff. Two kinds of file are
run records, not outputs, and are compared as such: a campaign's attempt
records (.attempts/*/attempt-*.json: when it ran, how long, on which host
and pid) are compared with those fields left out, and the campaign page
(index.html beside .attempts, which draws the attempts' durations) only for
being there on both sides.
"""

import difflib
import gzip
import hashlib
import io
import json
import os
import struct
import sys
import tarfile

# Fields of an attempt record that say when and where the attempt ran:
# they differ between any two runs, on any platform.
ATTEMPT_RUN_FIELDS = ("started_at", "ended_at", "duration_s", "host", "pid")


def _files(root):
    out = {}
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for name in files + [x for x in dirs if not os.listdir(os.path.join(d, x))]:
            p = os.path.join(d, name)
            out[os.path.relpath(p, root)] = p
    return out


def _is_attempt_record(rel):
    parts = rel.split(os.sep)
    return len(parts) >= 3 and parts[-3] == ".attempts" and parts[-1].startswith("attempt-") and parts[-1].endswith(".json")


def _is_campaign_page(rel, left_files):
    """index.html of a campaign output directory (one that has .attempts)."""
    d = os.path.dirname(rel)
    prefix = (d + os.sep if d else "") + ".attempts" + os.sep
    return os.path.basename(rel) == "index.html" and any(k.startswith(prefix) for k in left_files)


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _describe(rel, a, b):
    lines = ["  %s: %d bytes, sha256 %s  vs  %d bytes, sha256 %s" % (rel, len(a), _sha(a)[:16], len(b), _sha(b)[:16])]
    n = min(len(a), len(b))
    first = next((i for i in range(n) if a[i] != b[i]), n)
    lines.append("    first difference at byte %d" % first)
    try:
        ta, tb = a.decode("utf-8"), b.decode("utf-8")
    except UnicodeDecodeError:
        lines.append("    binary; bytes %d..%d: %s  vs  %s" % (first, first + 16, a[first:first + 16].hex(), b[first:first + 16].hex()))
        return lines
    diff = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), "left/" + rel, "right/" + rel, n=1, lineterm=""))
    lines += ["    " + x for x in diff[:24]]
    if len(diff) > 24:
        lines.append("    ... %d more diff lines" % (len(diff) - 24))
    return lines


def compare_trees(left, right):
    """(number of files compared, list of report lines for differences)."""
    lf, rf = _files(left), _files(right)
    problems = []
    for rel in sorted(set(lf) - set(rf)):
        problems.append("  %s: only in %s" % (rel, left))
    for rel in sorted(set(rf) - set(lf)):
        problems.append("  %s: only in %s" % (rel, right))
    same = 0
    for rel in sorted(set(lf) & set(rf)):
        lp, rp = lf[rel], rf[rel]
        if os.path.isdir(lp) or os.path.isdir(rp):
            if os.path.isdir(lp) != os.path.isdir(rp):
                problems.append("  %s: a directory on one side only" % rel)
            else:
                same += 1
            continue
        with open(lp, "rb") as f:
            a = f.read()
        with open(rp, "rb") as f:
            b = f.read()
        if _is_attempt_record(rel):
            try:
                ja, jb = json.loads(a), json.loads(b)
            except ValueError:
                problems.append("  %s: attempt record is not JSON" % rel)
                continue
            for j in (ja, jb):
                for k in ATTEMPT_RUN_FIELDS:
                    j.pop(k, None)
            a = json.dumps(ja, indent=2, sort_keys=True).encode()
            b = json.dumps(jb, indent=2, sort_keys=True).encode()
            if a != b:
                problems += _describe(rel + " (run fields " + ",".join(ATTEMPT_RUN_FIELDS) + " left out)", a, b)
            else:
                same += 1
            continue
        if _is_campaign_page(rel, lf):
            same += 1  # there on both sides; its charts draw run times
            continue
        if a != b:
            problems += _describe(rel, a, b)
        else:
            same += 1
    return same, problems


def elf(path):
    """(arch, static) of a 64-bit little-endian ELF executable."""
    with open(path, "rb") as f:
        h = f.read(64)
        if len(h) < 64 or h[:4] != b"\x7fELF" or h[4] != 2 or h[5] != 1:
            raise ValueError("%s: not a 64-bit little-endian ELF file" % path)
        machine = struct.unpack_from("<H", h, 18)[0]
        phoff = struct.unpack_from("<Q", h, 32)[0]
        size, num = struct.unpack_from("<HH", h, 54)
        f.seek(phoff)
        table = f.read(size * num)
    interp = any(struct.unpack_from("<I", table, i * size)[0] == 3 for i in range(num))
    return {62: "amd64", 183: "arm64"}.get(machine, "machine-%d" % machine), not interp


def oci(archive, path):
    """The image config of a single-image oci-archive, plus the sha256 of
    PATH as the image's layers leave it (None when absent)."""
    with tarfile.open(archive) as tf:
        members = {m.name[2:] if m.name.startswith("./") else m.name: m for m in tf.getmembers()}

        def read(name):
            if name not in members:
                raise ValueError("%s: no %s in the archive" % (archive, name))
            return tf.extractfile(members[name]).read()

        def blob(digest):
            return read("blobs/" + digest.replace(":", "/", 1))

        index = json.loads(read("index.json"))
        if len(index["manifests"]) != 1:
            raise ValueError("%s: %d images in the archive, want 1" % (archive, len(index["manifests"])))
        manifest = json.loads(blob(index["manifests"][0]["digest"]))
        config = json.loads(blob(manifest["config"]["digest"]))
        want = path.lstrip("/")
        digest = None
        for layer in manifest["layers"]:
            data = blob(layer["digest"])
            if layer["mediaType"].endswith("+gzip"):
                data = gzip.decompress(data)
            with tarfile.open(fileobj=io.BytesIO(data)) as lt:
                for m in lt.getmembers():
                    if m.name.lstrip("./") == want and m.isfile():
                        digest = hashlib.sha256(lt.extractfile(m).read()).hexdigest()
        config["file_sha256"] = digest
        config["ref_name"] = index["manifests"][0].get("annotations", {}).get("org.opencontainers.image.ref.name")
        return config


def main(argv):
    if len(argv) == 3 and argv[0] == "tree":
        same, problems = compare_trees(argv[1], argv[2])
        if problems:
            print("%d files identical; differences:" % same)
            print("\n".join(problems))
            return 1
        print("%d files identical" % same)
        return 0
    if len(argv) == 2 and argv[0] == "elf":
        arch, static = elf(argv[1])
        print(arch, "static" if static else "dynamic")
        return 0
    if len(argv) == 3 and argv[0] == "oci":
        print(json.dumps(oci(argv[1], argv[2]), indent=2, sort_keys=True))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
