#!/usr/bin/env python3
"""Package the static ceres-export release binary as a pip wheel.

    python3 release/wheel.py BINARY VERSION ARCH OUT_DIR [--notices FILE]...

The wheel is laid out the way ruff and uv ship theirs: the binary is a
"script" of the wheel (ceres_export-VERSION.data/scripts/ceres-export), so
`pip install` puts it on the venv's PATH, and a small ceres_export package
lets `python -m ceres_export` run it too. The binary is static, so one wheel
per architecture serves every glibc and every musl distribution: it carries
the manylinux 2014 (glibc 2.17) and musllinux 1.1 platform tags at once.

VERSION is the tool's version (`ceres-export version`, e.g.
"0.1.0+1a2b3c4d5e6f" or "0.1.0+1a2b3c4d5e6f.dirty"); it is checked against
PEP 440 and written in its normalised form. ARCH is amd64 or arm64 (Go's
names; x86_64 and aarch64 are accepted too) and must be the binary's own
ELF machine. Each --notices FILE goes in the wheel's .dist-info/licenses/
(core metadata 2.4, License-File).

The output is reproducible: entries are sorted, every timestamp is
SOURCE_DATE_EPOCH (1980-01-01 when unset or earlier, zip cannot go lower),
modes are fixed, so the same inputs give the same bytes (with the same
zlib). Standard library only: it runs where release/build.sh runs.
"""

import argparse
import base64
import hashlib
import io
import os
import re
import struct
import sys
import tempfile
import time
import zipfile

NAME = "ceres-export"
DIST = "ceres_export"  # the distribution name as wheel file names spell it
SUMMARY = "Turn CERES demonstration-capture sessions into LeRobot datasets"
SOURCE_URL = "https://github.com/ceres-robotics/ceres-export"

# The project's source is Apache-2.0; the binary statically links FFmpeg
# configured with --enable-gpl and x264, both GPL-2.0-or-later, so the
# binary as distributed is a GPL-2.0-or-later work as a whole. The notices
# file names every bundled component and its licence.
LICENSE_EXPRESSION = "Apache-2.0 AND GPL-2.0-or-later"

# Go's architecture names and ELF e_machine values, to the platform tags of
# a static binary: it needs no C library at all, so it satisfies the oldest
# manylinux (glibc 2.17, spelt both the PEP 600 and the PEP 599 way for pips
# older than 20.3) and musllinux 1.1 alike.
ARCHES = {
    "amd64": ("x86_64", 62),
    "x86_64": ("x86_64", 62),
    "arm64": ("aarch64", 183),
    "aarch64": ("aarch64", 183),
}

# PEP 440's grammar, as the packaging library writes it (Appendix B of the
# PEP), so that a Go module version such as "v0.2.0-rc.1" maps to "0.2.0rc1".
_VERSION_RE = re.compile(
    r"""^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$""",
    re.VERBOSE | re.IGNORECASE,
)
_PRE_LETTERS = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc", "rc": "rc"}


class Error(Exception):
    """A refusal: bad arguments or a binary that does not fit the tags."""


def pep440(version):
    """The normalised PEP 440 form of the tool's version string.

    Local version labels ("+1a2b3c4d5e6f.dirty") are kept: pip installs a
    local version from a file like any other, and it says which commit the
    binary was built from. Numeric parts lose leading zeros and letters are
    lowercased, as PEP 440 normalisation requires, so pip and the wheel's
    file name agree on one spelling.
    """
    m = _VERSION_RE.match(version)
    if not m:
        raise Error(
            "version %r is not a PEP 440 version (want RELEASE[+LOCAL], "
            "e.g. 0.1.0+1a2b3c4d5e6f or 0.1.0+1a2b3c4d5e6f.dirty)" % version
        )
    out = ""
    if m.group("epoch") and int(m.group("epoch")) != 0:
        out += "%d!" % int(m.group("epoch"))
    out += ".".join(str(int(p)) for p in m.group("release").split("."))
    if m.group("pre"):
        out += "%s%d" % (_PRE_LETTERS[m.group("pre_l").lower()], int(m.group("pre_n") or 0))
    if m.group("post"):
        out += ".post%d" % int(m.group("post_n1") or m.group("post_n2") or 0)
    if m.group("dev"):
        out += ".dev%d" % int(m.group("dev_n") or 0)
    if m.group("local"):
        parts = re.split(r"[-_.]", m.group("local"))
        out += "+" + ".".join(str(int(p)) if p.isdigit() else p.lower() for p in parts)
    return out


def platform_tag(arch):
    """The compressed platform tag set of a static binary for ARCH."""
    if arch not in ARCHES:
        raise Error("architecture %r: want amd64 or arm64" % arch)
    m = ARCHES[arch][0]
    return "manylinux_2_17_{0}.manylinux2014_{0}.musllinux_1_1_{0}".format(m)


def check_binary(path, arch):
    """Refuse a binary that is not a static ELF executable for ARCH.

    The tags promise that the binary runs without any C library; a binary
    with a program interpreter (PT_INTERP: ld-linux or ld-musl) would break
    that promise on every system whose loader differs, so it is refused
    here rather than by a user's failed run.
    """
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:4] != b"\x7fELF":
            raise Error("%s: not an ELF executable" % path)
        if head[4] != 2 or head[5] != 1:
            raise Error("%s: want a 64-bit little-endian ELF file" % path)
        e_machine = struct.unpack_from("<H", head, 18)[0]
        want = ARCHES[arch][1]
        if e_machine != want:
            raise Error("%s: ELF machine %d, but ARCH %s wants %d" % (path, e_machine, arch, want))
        e_phoff = struct.unpack_from("<Q", head, 32)[0]
        e_phentsize, e_phnum = struct.unpack_from("<HH", head, 54)
        f.seek(e_phoff)
        table = f.read(e_phentsize * e_phnum)
    for i in range(e_phnum):
        p_type = struct.unpack_from("<I", table, i * e_phentsize)[0]
        if p_type == 3:  # PT_INTERP
            raise Error(
                "%s: dynamically linked (it names a program interpreter); "
                "a manylinux+musllinux wheel needs a static binary" % path
            )


INIT_PY = '''"""ceres-export: turn CERES demonstration-capture sessions into LeRobot datasets.

The wheel ships the static ceres-export binary as a script, installed on
the environment's PATH; find_ceres_export_bin() says where it is.
"""

import os
import sys
import sysconfig

__version__ = "{version}"


def find_ceres_export_bin():
    """The path of the installed ceres-export binary."""
    exe = "ceres-export" + (sysconfig.get_config_var("EXE") or "")
    candidates = [os.path.join(sysconfig.get_path("scripts"), exe)]
    if sys.version_info >= (3, 10):
        user = sysconfig.get_preferred_scheme("user")
    else:
        user = "posix_user"
    try:
        candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user), exe))
    except KeyError:
        pass
    # pip install --target DIR puts the package in DIR and the script in DIR/bin.
    candidates.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin", exe))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError("ceres-export binary not found; looked at " + ", ".join(candidates))
'''

MAIN_PY = '''"""python -m ceres_export ARGS... runs the ceres-export binary with ARGS."""

import os
import sys

from ceres_export import find_ceres_export_bin


def main():
    path = find_ceres_export_bin()
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    main()
'''

DESCRIPTION = """# ceres-export

ceres-export turns CERES demonstration-capture sessions into LeRobot
datasets (format v3.0). This wheel installs the `ceres-export` command, a
single static binary with FFmpeg inside; `python -m ceres_export` runs it
too. It runs on any Linux {machine} system, glibc or musl, with no other
package.

## Licence

The ceres-export source code is licensed under Apache-2.0. The binary in
this wheel statically links FFmpeg built with `--enable-gpl` and the x264
encoder, which are licensed under GPL-2.0-or-later, so the binary as a
whole is distributed under the GNU General Public License, version 2 or
(at your option) any later version; the Apache-2.0 parts remain available
under Apache-2.0 on their own. The licence expression says both. The
bundled components, their licences and where their sources are, are listed
in the licence files this wheel carries ({notices}).
"""


def _record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _date_time():
    """The one timestamp every entry carries: SOURCE_DATE_EPOCH, clamped to
    zip's 1980 floor, else that floor."""
    floor = 315532800  # 1980-01-01T00:00:00Z
    sde = os.environ.get("SOURCE_DATE_EPOCH", "")
    if sde:
        if not sde.isdigit():
            raise Error("SOURCE_DATE_EPOCH %r: want a non-negative integer" % sde)
        epoch = max(int(sde), floor)
    else:
        epoch = floor
    return time.gmtime(epoch)[:6]


def build_wheel(binary, version, arch, out_dir, notices=()):
    """Write the wheel into out_dir and return its path."""
    arch_key = arch.lower()
    tag_platform = platform_tag(arch_key)
    check_binary(binary, arch_key)
    ver = pep440(version)
    seen = set()
    for n in notices:
        base = os.path.basename(n)
        if base in seen:
            raise Error("notices: two files named %s; licence files need distinct names" % base)
        seen.add(base)
        if not os.path.isfile(n):
            raise Error("notices file %s: not found" % n)

    # A wheel file name escapes "-" in its version; PEP 440 normal forms
    # have none, but the rule is the spec's.
    wheel_name = "%s-%s-py3-none-%s.whl" % (DIST, ver.replace("-", "_"), tag_platform)
    data_dir = "%s-%s.data" % (DIST, ver)
    info_dir = "%s-%s.dist-info" % (DIST, ver)
    machine = ARCHES[arch_key][0]

    with open(binary, "rb") as f:
        exe = f.read()
    lic_names = sorted(os.path.basename(n) for n in notices)
    metadata = [
        "Metadata-Version: 2.4",
        "Name: " + NAME,
        "Version: " + ver,
        "Summary: " + SUMMARY,
        "License-Expression: " + LICENSE_EXPRESSION,
    ]
    metadata += ["License-File: " + n for n in lic_names]
    metadata += [
        "Project-URL: Source, " + SOURCE_URL,
        "Requires-Python: >=3.7",
        "Description-Content-Type: text/markdown",
        "",
        DESCRIPTION.format(machine=machine, notices=", ".join(lic_names) or "none given").rstrip("\n"),
        "",
    ]
    wheel_meta = [
        "Wheel-Version: 1.0",
        "Generator: ceres-export release/wheel.py",
        "Root-Is-Purelib: false",
    ]
    wheel_meta += ["Tag: py3-none-" + t for t in tag_platform.split(".")]
    wheel_meta.append("")

    files = {  # archive path -> (bytes, executable)
        "ceres_export/__init__.py": (INIT_PY.format(version=ver).encode(), False),
        "ceres_export/__main__.py": (MAIN_PY.encode(), False),
        data_dir + "/scripts/ceres-export": (exe, True),
        info_dir + "/METADATA": ("\n".join(metadata).encode("utf-8"), False),
        info_dir + "/WHEEL": ("\n".join(wheel_meta).encode(), False),
    }
    for n in notices:
        with open(n, "rb") as f:
            files[info_dir + "/licenses/" + os.path.basename(n)] = (f.read(), False)

    # The wheel spec asks for .dist-info last and RECORD last of all; the
    # rest is sorted so that the order never depends on a dict or a disk.
    record_path = info_dir + "/RECORD"
    order = sorted(p for p in files if not p.startswith(info_dir + "/"))
    order += sorted(p for p in files if p.startswith(info_dir + "/"))
    record = io.StringIO()
    for p in order:
        data = files[p][0]
        record.write("%s,%s,%d\n" % (p, _record_hash(data), len(data)))
    record.write("%s,,\n" % record_path)
    files[record_path] = (record.getvalue().encode(), False)
    order.append(record_path)

    date_time = _date_time()
    os.makedirs(out_dir, exist_ok=True)
    dest = os.path.join(out_dir, wheel_name)
    fd, tmp = tempfile.mkstemp(prefix=".wheel-", suffix=".tmp", dir=out_dir)
    try:
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w") as zf:
            for p in order:
                data, executable = files[p]
                zi = zipfile.ZipInfo(p, date_time=date_time)
                zi.create_system = 3  # Unix: pip applies the mode bits below
                zi.external_attr = ((0o100755 if executable else 0o100644) & 0xFFFF) << 16
                zi.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(zi, data, compresslevel=6)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        os.unlink(tmp)
        raise
    return dest


def main(argv):
    ap = argparse.ArgumentParser(
        prog="wheel.py",
        description="Package the static ceres-export binary as a pip wheel (manylinux 2014 + musllinux 1.1).",
    )
    ap.add_argument("binary", help="the static ceres-export binary")
    ap.add_argument("version", help="the tool's version, e.g. 0.1.0+1a2b3c4d5e6f (PEP 440 after normalisation)")
    ap.add_argument("arch", help="amd64 or arm64")
    ap.add_argument("out_dir", help="directory the wheel is written to")
    ap.add_argument("--notices", action="append", default=[], metavar="FILE",
                    help="a licence/notices file for .dist-info/licenses/ (repeatable)")
    args = ap.parse_args(argv)
    try:
        path = build_wheel(args.binary, args.version, args.arch, args.out_dir, args.notices)
    except (Error, OSError) as e:
        print("wheel.py: %s" % e, file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
