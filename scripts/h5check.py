#!/usr/bin/env python3
"""Check flexmb HDF5 run files with h5py (and h5dump when installed).

Usage: python3 scripts/h5check.py DIR

For every DIR/*.h5:
  * with a sidecar DIR/<name>.expected.json (written by tests/output_hdf5.rs
    when FLEXMB_H5CHECK_DIR is set): every dataset is compared bit-exactly
    (f64 through .view(np.uint64)), absent datasets must be absent, root
    attributes must match, and compressed files must use shuffle + gzip;
  * without one: the file must open and every streamed dataset must decode;
  * every streamed dataset (unlimited first dimension: the fixed layout plus
    /points, /bodies/*, /joints/*) must have as many rows as /time;
  * with an XDMF side file DIR/<name>.xmf: it must parse as XML, every HDF
    DataItem must name a dataset of the file with the dimensions it claims,
    every hyperslab must lie inside its dataset with a count equal to its
    dimensions (step grid i: row i), and the temporal collection must have one grid per /time
    row at exactly those times;
  * `h5dump -H FILE` must succeed (skipped with a note when h5dump is missing);
  * a file whose superblock still has the SWMR "open for write" flags (a
    writer killed inside a flush's superblock write) must have status
    "running"; it is opened with swmr=True, and h5dump reads a copy cleared
    by `h5clear -s`.

Prints one line per file and exits 1 on any mismatch.
"""

import json
import math
import xml.etree.ElementTree as ET
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py
import numpy as np

def streamed(f):
    """Paths of the streamed datasets: those with an unlimited first dimension."""
    out = []

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.maxshape and obj.maxshape[0] is None:
            out.append(name)

    f.visititems(visit)
    return out


def as_str(x):
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def check_dataset(f, path, exp, errors):
    if path not in f:
        errors.append(f"/{path} missing")
        return
    ds = f[path]
    shape = tuple(exp["shape"])
    if ds.shape != shape:
        errors.append(f"/{path} shape {ds.shape} != {shape}")
        return
    kind = exp["dtype"]
    if kind == "f64":
        if ds.dtype != np.dtype("<f8"):
            errors.append(f"/{path} dtype {ds.dtype} != <f8")
            return
        got = np.asarray(ds[()], dtype="<f8").reshape(-1).view(np.uint64)
        want = np.array(exp["bits"], dtype=np.uint64)
        if got.shape != want.shape or not np.array_equal(got, want):
            bad = np.flatnonzero(got != want) if got.shape == want.shape else []
            where = f" first at flat index {bad[0]}" if len(bad) else ""
            errors.append(f"/{path} f64 bits differ{where}")
    elif kind in ("uint", "int"):
        if ds.dtype.kind not in "ui":
            errors.append(f"/{path} dtype {ds.dtype} is not an integer type")
            return
        got = [int(x) for x in np.asarray(ds[()]).reshape(-1)]
        if got != [int(x) for x in exp["values"]]:
            errors.append(f"/{path} integer values differ")
    elif kind == "str":
        if ds.dtype.kind not in "OS":
            errors.append(f"/{path} dtype {ds.dtype} is not a string type")
            return
        got = [as_str(x) for x in np.asarray(ds[()]).reshape(-1)]
        if got != exp["values"]:
            errors.append(f"/{path} strings differ: {got[:3]}... != {exp['values'][:3]}...")
    else:
        errors.append(f"/{path}: unknown expected dtype {kind}")


def check_attr(f, name, exp, errors):
    if name not in f.attrs:
        errors.append(f"@{name} missing")
        return
    got = f.attrs[name]
    kind = exp["type"]
    if kind == "f64":
        if not isinstance(got, (float, np.floating)) or np.asarray(got).dtype != np.dtype("<f8"):
            errors.append(f"@{name} is {type(got).__name__}, not f64")
        elif f64_bits(got) != int(exp["bits"]):
            errors.append(f"@{name} bits {f64_bits(got):#x} != {int(exp['bits']):#x}")
    elif kind == "i64":
        if not isinstance(got, (int, np.integer)) or np.asarray(got).dtype != np.dtype("<i8"):
            errors.append(f"@{name} is {type(got).__name__}, not i64")
        elif int(got) != int(exp["value"]):
            errors.append(f"@{name} = {got} != {exp['value']}")
    elif kind == "str":
        if not isinstance(got, (str, bytes)):
            errors.append(f"@{name} is {type(got).__name__}, not a string")
        elif as_str(got) != exp["value"]:
            errors.append(f"@{name} = {as_str(got)!r} != {exp['value']!r}")
    else:
        errors.append(f"@{name}: unknown expected type {kind}")


def check_with_sidecar(f, exp, errors):
    for path, d in exp["datasets"].items():
        check_dataset(f, path, d, errors)
    for path in exp.get("absent", []):
        if path in f:
            errors.append(f"/{path} present but its field was not selected")
    for name, a in exp["attrs"].items():
        check_attr(f, name, a, errors)
    extra = set(f.attrs) - set(exp["attrs"])
    if extra:
        errors.append(f"unexpected root attributes {sorted(extra)}")
    if exp.get("compression", 0) > 0:
        for path in streamed(f):
            ds = f[path]
            if ds.size and (ds.compression != "gzip" or not ds.shuffle):
                errors.append(f"/{path} not shuffle+gzip compressed")


def check_structure(f, errors):
    if "time" not in f:
        errors.append("/time missing")
        return
    steps = f["time"].shape[0]
    for path in streamed(f):
        if f[path].shape[0] != steps:
            errors.append(f"/{path} has {f[path].shape[0]} rows, /time has {steps}")
        f[path][()]  # every chunk must decode


def check_xdmf(h5, f, xmf, errors):
    """The XDMF side file references datasets of `f` with the right shapes."""
    try:
        root = ET.parse(xmf).getroot()
    except ET.ParseError as e:
        errors.append(f"{xmf.name}: not XML: {e}")
        return
    dims = lambda item: tuple(int(d) for d in item.get("Dimensions").split())
    for item in root.iter("DataItem"):
        if item.get("Format") == "HDF":
            file, _, path = item.text.strip().partition(":/")
            if file != h5.name:
                errors.append(f"{xmf.name}: DataItem names file {file}, not {h5.name}")
            elif path not in f:
                errors.append(f"{xmf.name}: /{path} not in the file")
            elif f[path].shape != dims(item):
                errors.append(f"{xmf.name}: /{path} shape {f[path].shape} != {dims(item)}")
        if item.get("ItemType") == "HyperSlab":
            sel, data = list(item)
            r = len(dims(data))
            v = [int(x) for x in sel.text.split()]
            start, stride, count = v[:r], v[r:2 * r], v[2 * r:]
            if tuple(count) != dims(item):
                errors.append(f"{xmf.name}: hyperslab count {count} != {dims(item)}")
            if any(s + t * (c - 1) >= n for s, t, c, n in zip(start, stride, count, dims(data))):
                errors.append(f"{xmf.name}: hyperslab {v} outside {dims(data)}")
    temporal = [g for g in root.iter("Grid") if g.get("CollectionType") == "Temporal"]
    if len(temporal) != 1:
        errors.append(f"{xmf.name}: {len(temporal)} temporal collections")
        return
    steps = temporal[0].findall("Grid")
    times = [float(g.find("Time").get("Value")) for g in steps]
    for i, g in enumerate(steps):
        for slab in g.iter("DataItem"):
            if slab.get("ItemType") == "HyperSlab" and int(list(slab)[0].text.split()[0]) != i:
                errors.append(f"{xmf.name}: step grid {i} shows another row of /points")
    want = [float(t) for t in f["time"][()]] if "time" in f else []
    if [f64_bits(t) for t in times] != [f64_bits(t) for t in want]:
        errors.append(f"{xmf.name}: {len(times)} step grids, times differ from /time")


SWMR_FLAGS = 0x01 | 0x04  # superblock v3: file open for write | for SWMR write


def swmr_flags_set(h5):
    """Whether the (version >= 3) superblock at offset 0 still says "open for
    (SWMR) write": a writer killed inside a flush's superblock write."""
    head = h5.read_bytes()[:12]
    return head[:8] == b"\x89HDF\r\n\x1a\n" and head[8] >= 3 and head[11] & SWMR_FLAGS != 0


def h5dump_header(h5dump, h5, flagged, errors):
    """`h5dump -H`; a flagged file on a copy cleared by `h5clear -s`."""
    target = h5
    if flagged:
        h5clear = shutil.which("h5clear")
        if not h5clear:
            return " (h5dump skipped: no h5clear)"
        tmp = Path(tempfile.mkdtemp())
        target = tmp / h5.name
        shutil.copyfile(h5, target)
        r = subprocess.run([h5clear, "-s", str(target)], capture_output=True, text=True)
        if r.returncode != 0:
            errors.append(f"h5clear -s failed: {(r.stderr or r.stdout).strip()[:200]}")
            return ""
    r = subprocess.run([h5dump, "-H", str(target)], capture_output=True, text=True)
    if r.returncode != 0:
        errors.append(f"h5dump -H failed: {(r.stderr or r.stdout).strip()[:200]}")
    if flagged:
        shutil.rmtree(target.parent)
        return " (h5dump after h5clear -s)"
    return ""


def check_file(h5, h5dump):
    errors = []
    sidecar = h5.with_name(h5.stem + ".expected.json")
    # A writer killed inside a flush's superblock write leaves the SWMR flags
    # set (docs/output-format.md): libhdf5 opens such a file only as an SWMR
    # reader, and only a run that did not finish may leave one.
    flagged = swmr_flags_set(h5)
    try:
        with h5py.File(h5, "r", swmr=flagged) as f:
            steps = f["time"].shape[0] if "time" in f else -1
            status = as_str(f.attrs.get("status", "?"))
            if flagged and status != "running":
                errors.append(f"SWMR flags set with status {status!r}")
            if sidecar.exists():
                mode = "bit-exact"
                check_with_sidecar(f, json.loads(sidecar.read_text()), errors)
            else:
                mode = "structure"
            check_structure(f, errors)
            xmf = h5.with_suffix(".xmf")
            if xmf.exists():
                mode += " + xdmf"
                check_xdmf(h5, f, xmf, errors)
            if flagged:
                mode += ", SWMR flags set (opened with swmr=True)"
    except Exception as e:  # noqa: BLE001 - any failure to open/read is a finding
        return [f"h5py: {type(e).__name__}: {e}"], "open", -1, "?"
    if h5dump:
        mode += h5dump_header(h5dump, h5, flagged, errors)
    return errors, mode, steps, status


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    d = Path(sys.argv[1])
    files = sorted(d.glob("*.h5"))
    if not files:
        print(f"no .h5 files in {d}", file=sys.stderr)
        return 1
    h5dump = shutil.which("h5dump")
    if not h5dump:
        print("note: h5dump not found (apt-get install hdf5-tools); skipping h5dump -H checks")
    failed = 0
    for h5 in files:
        errors, mode, steps, status = check_file(h5, h5dump)
        ok = "OK  " if not errors else "FAIL"
        print(f"{ok} {h5.name}: {mode}, {steps} steps, status {status}"
              + ("" if not errors else "; " + "; ".join(errors[:5])))
        failed += bool(errors)
    print(f"{len(files) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
