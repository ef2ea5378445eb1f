#!/usr/bin/env python3
"""Read flexmb XDMF side files with VTK's XDMF reader (ParaView's "XDMF Reader").

Usage: python3 scripts/xdmf_vtk_check.py DIR

For every DIR/<name>.xmf beside DIR/<name>.h5: the reader's time steps must
equal /time, and at the first, middle and last step (then the first again,
so that a stale cache would show) every block's points must equal
/points[i] and its cells /mesh/<block>/connectivity, with no VTK error
output. Needs `pip install vtk h5py numpy`; prints one line per file and
exits 1 on any mismatch.
"""

import sys
from pathlib import Path

import h5py
import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy


def check(xmf):
    errors = []
    reader = vtk.vtkXdmfReader()
    vtk_errors = []
    # vtkErrorWithObjectMacro(reader, ...) fires the reader's ErrorEvent.
    reader.AddObserver("ErrorEvent", lambda obj, ev: vtk_errors.append(ev))
    reader.AddObserver("WarningEvent", lambda obj, ev: vtk_errors.append(ev))
    reader.SetFileName(str(xmf))
    reader.UpdateInformation()
    ts = reader.GetOutputInformation(0).Get(vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS())
    ts = [] if ts is None else list(ts)
    with h5py.File(xmf.with_suffix(".h5"), "r") as f:
        t = f["time"][()]
        points = f["points"][()]
        conn = {k: f[f"mesh/{k}/connectivity"][()] for k, g in f["mesh"].items()
                if isinstance(g, h5py.Group)}
    if not np.array_equal(np.array(ts), t):
        errors.append(f"{len(ts)} VTK time steps differ from /time ({len(t)})")
    blocks = 0
    for i in sorted({0, len(ts) // 2, len(ts) - 1}) + [0] if ts else []:
        reader.UpdateTimeStep(ts[i])
        it = reader.GetOutputDataObject(0).NewIterator()
        it.InitTraversal()
        while not it.IsDoneWithTraversal():
            g = it.GetCurrentDataObject()
            name = it.GetCurrentMetaData().Get(vtk.vtkCompositeDataSet.NAME()).split("[")[0]
            pts = vtk_to_numpy(g.GetPoints().GetData())
            cells = vtk_to_numpy(g.GetCells().GetConnectivityArray())
            if not np.array_equal(pts, points[i]):
                errors.append(f"step {i} block {name}: points differ from /points[{i}]")
            if name not in conn or not np.array_equal(cells, conn[name].reshape(-1)):
                errors.append(f"step {i} block {name}: cells differ from its connectivity")
            blocks += 1
            it.GoToNextItem()
    if vtk_errors:
        errors.append(f"VTK reported {len(vtk_errors)} errors or warnings")
    return errors, len(ts), blocks


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    # The observers above count VTK's messages; keep them off stderr.
    vtk.vtkLogger.SetStderrVerbosity(vtk.vtkLogger.VERBOSITY_OFF)
    files = sorted(Path(sys.argv[1]).glob("*.xmf"))
    failed = 0
    for xmf in files:
        errors, steps, blocks = check(xmf)
        ok = "OK  " if not errors else "FAIL"
        print(f"{ok} {xmf.name}: {steps} steps, {blocks} blocks read"
              + ("" if not errors else "; " + "; ".join(errors[:5])))
        failed += bool(errors)
    print(f"{len(files) - failed} passed, {failed} failed")
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main())
