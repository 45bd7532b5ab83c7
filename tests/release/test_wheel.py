"""Tests of release/wheel.py and tests/release/check.py (standard library only).

    python3 -m unittest discover -s tests/release -p 'test_*.py'

The binaries are synthetic ELF headers: wheel.py reads only the header and
the program headers, so a few hundred bytes stand for a static or a
dynamic binary of either machine.
"""

import base64
import hashlib
import importlib.util
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


wheel = _load("ceres_release_wheel", os.path.join(ROOT, "release", "wheel.py"))
check = _load("ceres_release_check", os.path.join(HERE, "check.py"))


def fake_elf(path, machine=62, interp=False):
    """A 64-bit little-endian ELF executable header with one LOAD program
    header, and a PT_INTERP one when interp."""
    phnum = 2 if interp else 1
    ehdr = bytearray(64)
    ehdr[:4] = b"\x7fELF"
    ehdr[4], ehdr[5], ehdr[6] = 2, 1, 1
    struct.pack_into("<HHI", ehdr, 16, 2, machine, 1)
    struct.pack_into("<Q", ehdr, 32, 64)  # e_phoff
    struct.pack_into("<HHH", ehdr, 52, 64, 56, phnum)
    phdrs = struct.pack("<II6Q", 1, 5, 0, 0, 0, 0, 0, 0)
    if interp:
        phdrs += struct.pack("<II6Q", 3, 4, 0, 0, 0, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(bytes(ehdr) + phdrs + b"payload" * 100)
    os.chmod(path, 0o755)


class Pep440Test(unittest.TestCase):
    def test_versions(self):
        cases = [
            ("0.1.0", "0.1.0"),
            ("0.1.0+1a2b3c4d5e6f", "0.1.0+1a2b3c4d5e6f"),
            ("0.1.0+1a2b.dirty", "0.1.0+1a2b.dirty"),
            ("0.1.0+1A2B3C4D5E6F.dirty", "0.1.0+1a2b3c4d5e6f.dirty"),
            ("v0.2.0", "0.2.0"),
            ("v0.2.0-rc.1", "0.2.0rc1"),
            ("0.2.0-beta.2+abc", "0.2.0b2+abc"),
            ("1.0.0+012345678901", "1.0.0+12345678901"),  # an all-digit revision loses its zero
            ("01.002.0", "1.2.0"),
            ("1.0.post1.dev3", "1.0.post1.dev3"),
        ]
        for given, want in cases:
            with self.subTest(given=given):
                self.assertEqual(wheel.pep440(given), want)

    def test_refused(self):
        for bad in ["", "0.1.0+", "0.1.0+a+b", "0.1.0-x", "latest", "0.1.0+dirty!", "1.0.0-rc.1.2"]:
            with self.subTest(bad=bad), self.assertRaises(wheel.Error):
                wheel.pep440(bad)


class WheelTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name
        self.amd64 = os.path.join(self.dir, "ceres-export-linux-amd64")
        self.arm64 = os.path.join(self.dir, "ceres-export-linux-arm64")
        fake_elf(self.amd64, 62)
        fake_elf(self.arm64, 183)
        self.notices = os.path.join(self.dir, "THIRD_PARTY_NOTICES")
        with open(self.notices, "w") as f:
            f.write("x264: GPL-2.0-or-later\n")

    def build(self, out, binary=None, version="0.1.0+1a2b3c4d5e6f.dirty", arch="amd64", notices=None, env=None):
        old = dict(os.environ)
        try:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
            os.environ.update(env or {})
            return wheel.build_wheel(binary or self.amd64, version, arch, os.path.join(self.dir, out),
                                     [self.notices] if notices is None else notices)
        finally:
            os.environ.clear()
            os.environ.update(old)

    def test_name_and_tags(self):
        cases = [
            ("amd64", "x86_64"),
            ("arm64", "aarch64"),
        ]
        for arch, machine in cases:
            with self.subTest(arch=arch):
                path = self.build("out-" + arch, binary=self.amd64 if arch == "amd64" else self.arm64, arch=arch)
                self.assertEqual(
                    os.path.basename(path),
                    "ceres_export-0.1.0+1a2b3c4d5e6f.dirty-py3-none-manylinux_2_17_{0}.manylinux2014_{0}.musllinux_1_1_{0}.whl".format(machine),
                )
                with zipfile.ZipFile(path) as z:
                    w = z.read("ceres_export-0.1.0+1a2b3c4d5e6f.dirty.dist-info/WHEEL").decode()
                self.assertIn("Root-Is-Purelib: false\n", w)
                tags = [line[5:] for line in w.splitlines() if line.startswith("Tag: ")]
                self.assertEqual(tags, ["py3-none-manylinux_2_17_" + machine, "py3-none-manylinux2014_" + machine,
                                        "py3-none-musllinux_1_1_" + machine])

    def test_layout_modes_metadata(self):
        path = self.build("out")
        info = "ceres_export-0.1.0+1a2b3c4d5e6f.dirty.dist-info/"
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            self.assertEqual(names, [
                "ceres_export-0.1.0+1a2b3c4d5e6f.dirty.data/scripts/ceres-export",
                "ceres_export/__init__.py",
                "ceres_export/__main__.py",
                info + "METADATA",
                info + "WHEEL",
                info + "licenses/THIRD_PARTY_NOTICES",
                info + "RECORD",
            ])
            modes = {zi.filename: (zi.external_attr >> 16, zi.create_system, zi.date_time) for zi in z.infolist()}
            self.assertEqual(modes[names[0]], (0o100755, 3, (1980, 1, 1, 0, 0, 0)))
            self.assertEqual(modes[names[1]], (0o100644, 3, (1980, 1, 1, 0, 0, 0)))
            with open(self.amd64, "rb") as f:
                self.assertEqual(z.read(names[0]), f.read())
            meta = z.read(info + "METADATA").decode()
            for line in ["Metadata-Version: 2.4", "Name: ceres-export", "Version: 0.1.0+1a2b3c4d5e6f.dirty",
                         "License-Expression: Apache-2.0 AND GPL-2.0-or-later",
                         "License-File: THIRD_PARTY_NOTICES"]:
                self.assertIn(line + "\n", meta)
            self.assertIn("GPL-2.0-or-later", meta.split("\n\n", 1)[1])  # the description says why
            # RECORD: every other file with its digest and size, itself without.
            rows = [r.split(",") for r in z.read(info + "RECORD").decode().splitlines()]
            self.assertEqual([r[0] for r in rows], names)
            for name, digest, size in rows[:-1]:
                data = z.read(name)
                want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, size), ("sha256=" + want, str(len(data))), name)
            self.assertEqual(rows[-1], [info + "RECORD", "", ""])
            init = z.read("ceres_export/__init__.py").decode()
            self.assertIn('__version__ = "0.1.0+1a2b3c4d5e6f.dirty"', init)

    def test_reproducible(self):
        a = self.build("a")
        b = self.build("b")
        with open(a, "rb") as fa, open(b, "rb") as fb:
            self.assertEqual(fa.read(), fb.read())
        c = self.build("c", env={"SOURCE_DATE_EPOCH": "1700000000"})
        with zipfile.ZipFile(c) as z:
            self.assertEqual({zi.date_time for zi in z.infolist()}, {(2023, 11, 14, 22, 13, 20)})
        d = self.build("d", env={"SOURCE_DATE_EPOCH": "0"})  # before zip's floor: clamped
        with open(a, "rb") as fa, open(d, "rb") as fd:
            self.assertEqual(fa.read(), fd.read())

    def test_refusals(self):
        dynamic = os.path.join(self.dir, "dynamic")
        fake_elf(dynamic, 62, interp=True)
        script = os.path.join(self.dir, "script")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n" + "#" * 100 + "\n")
        cases = [
            ("dynamic", dict(binary=dynamic), "dynamically linked"),
            ("wrong machine", dict(binary=self.arm64, arch="amd64"), "ELF machine 183"),
            ("not ELF", dict(binary=script), "not an ELF"),
            ("bad arch", dict(arch="riscv64"), "want amd64 or arm64"),
            ("bad version", dict(version="0.1.0-x"), "not a PEP 440 version"),
            ("missing notices", dict(notices=[os.path.join(self.dir, "nope")]), "not found"),
        ]
        for name, kw, msg in cases:
            with self.subTest(name=name):
                with self.assertRaises(wheel.Error) as cm:
                    self.build("refused", **kw)
                self.assertIn(msg, str(cm.exception))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "refused")) and os.listdir(os.path.join(self.dir, "refused")))

    def test_cli(self):
        out = os.path.join(self.dir, "cli")
        env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
        p = subprocess.run([sys.executable, os.path.join(ROOT, "release", "wheel.py"), self.amd64, "0.1.0", "amd64", out,
                            "--notices", self.notices], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.listdir(out), [os.path.basename(p.stdout.strip())])
        p = subprocess.run([sys.executable, os.path.join(ROOT, "release", "wheel.py"), self.arm64, "0.1.0", "amd64", out],
                           capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 1)
        self.assertIn("wheel.py: ", p.stderr)


class CompareTreesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def tree(self, name, files):
        root = os.path.join(self.tmp.name, name)
        for rel, data in files.items():
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data if isinstance(data, bytes) else data.encode())
        return root

    def attempt(self, **run):
        rec = {"task_id": "t", "state": "succeeded", "started_at": "a", "ended_at": "b", "duration_s": 1.5,
               "host": "h", "pid": 1}
        rec.update(run)
        return json.dumps(rec, indent=2)

    def test_cases(self):
        base = {"A/data.parquet": b"\x00\x01\x02", "A/meta/info.json": "{}\n",
                "O/.attempts/t/attempt-0001.json": self.attempt(), "O/index.html": "<p>1.5 s</p>"}
        cases = [
            ("identical", {}, True, []),
            ("attempt run fields differ", {"O/.attempts/t/attempt-0001.json": self.attempt(started_at="z", pid=9, host="x")}, True, []),
            ("campaign page differs", {"O/index.html": "<p>2.5 s</p>"}, True, []),
            ("attempt outcome differs", {"O/.attempts/t/attempt-0001.json": self.attempt(state="failed")}, False, ["attempt-0001.json"]),
            ("binary byte differs", {"A/data.parquet": b"\x00\x01\x03"}, False, ["A/data.parquet", "first difference at byte 2"]),
            ("text differs", {"A/meta/info.json": "{\"x\": 1}\n"}, False, ["A/meta/info.json", "+{\"x\": 1}"]),
            ("file only on one side", {"A/extra": "x"}, False, ["A/extra: only in"]),
        ]
        for name, change, ok, says in cases:
            with self.subTest(name=name):
                left = self.tree(name.replace(" ", "_") + "-l", base)
                right = self.tree(name.replace(" ", "_") + "-r", dict(base, **change))
                same, problems = check.compare_trees(left, right)
                self.assertEqual(problems == [], ok, problems)
                text = "\n".join(problems)
                for s in says:
                    self.assertIn(s, text)

    def test_page_outside_a_campaign_is_compared(self):
        left = self.tree("l", {"A/index.html": "1"})
        right = self.tree("r", {"A/index.html": "2"})
        self.assertNotEqual(check.compare_trees(left, right)[1], [])


class ElfTest(unittest.TestCase):
    def test_elf(self):
        with tempfile.TemporaryDirectory() as d:
            cases = [(62, False, ("amd64", True)), (183, False, ("arm64", True)), (62, True, ("amd64", False))]
            for machine, interp, want in cases:
                p = os.path.join(d, "b")
                fake_elf(p, machine, interp)
                self.assertEqual(check.elf(p), want)


if __name__ == "__main__":
    unittest.main()
