//! The XDMF side file (`OUT.xmf` beside `OUT.h5`) that lets ParaView (and
//! VisIt) animate a run without conversion.
//!
//! XDMF 3 (<https://www.xdmf.org/index.php/XDMF_Model_and_Format>): a
//! temporal collection with one spatial collection per recorded step, holding
//! one uniform grid per cell block of `/mesh` (`Polyline` topology for the
//! elements, `Polyvertex` for the rigid bodies). Every grid's geometry is the
//! step's slice of `/points` (`HyperSlab` data item: start `[i, 0, 0]`,
//! stride 1, count `[1, n_points, 3]`); the heavy data stays in the HDF5 file.
//!
//! Each hyperslab starts with the comment `<!-- /points row i -->`: VTK's
//! XDMF reader (ParaView's "XDMF Reader", `vtkXdmfHeavyData::ReadDataSet`)
//! keys its per-block dataset cache on the text of the geometry data item's
//! first child node; without a child with text it logs "Cannot find DataItem
//! element in geometry xml, no caching possible" for every grid it reads.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{path_component, MESH_BODIES, POINTS};
use crate::output::{Mesh, OutputError};

/// Escapes `s` for an XML attribute value or text node.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// One grid's topology: XDMF type, cells, points per cell, connectivity dataset.
struct Topology {
    name: String,
    kind: &'static str,
    cells: usize,
    per_cell: usize,
    dataset: String,
}

/// The XDMF document for a run file named `h5_name` (relative to the XDMF
/// file) with `mesh` and the recorded `times`.
pub(in crate::output) fn document(h5_name: &str, mesh: &Mesh, times: &[f64]) -> String {
    let file = escape(h5_name);
    let np = mesh.points.len();
    let steps = times.len();
    let mut grids: Vec<Topology> = mesh
        .cells
        .iter()
        .map(|c| Topology {
            name: path_component(&c.kind),
            kind: "Polyline",
            cells: c.len(),
            per_cell: c.points_per_cell,
            dataset: format!("mesh/{}/connectivity", path_component(&c.kind)),
        })
        .collect();
    if !mesh.bodies.is_empty() {
        grids.push(Topology {
            name: MESH_BODIES.into(),
            kind: "Polyvertex",
            cells: mesh.bodies.len(),
            per_cell: 1,
            dataset: format!("mesh/{MESH_BODIES}/connectivity"),
        });
    }

    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    x.push_str("<Xdmf xmlns:xi=\"http://www.w3.org/2001/XInclude\" Version=\"3.0\">\n");
    x.push_str("  <Domain>\n");
    x.push_str("    <Grid Name=\"flexmb\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
    for (i, t) in times.iter().enumerate() {
        // Writing to a String cannot fail.
        let _ = writeln!(
            x,
            "      <Grid Name=\"step {i}\" GridType=\"Collection\" CollectionType=\"Spatial\">\n        <Time Value=\"{t:?}\"/>"
        );
        for g in &grids {
            let _ = write!(
                x,
                "        <Grid Name=\"{name}\" GridType=\"Uniform\">\n\
                 \x20         <Topology TopologyType=\"{kind}\" NumberOfElements=\"{n}\" NodesPerElement=\"{k}\">\n\
                 \x20           <DataItem Dimensions=\"{n} {k}\" NumberType=\"Int\" Precision=\"8\" Format=\"HDF\">{file}:/{ds}</DataItem>\n\
                 \x20         </Topology>\n\
                 \x20         <Geometry GeometryType=\"XYZ\">\n\
                 \x20           <DataItem ItemType=\"HyperSlab\" Dimensions=\"1 {np} 3\" Type=\"HyperSlab\"><!-- /points row {i} -->\n\
                 \x20             <DataItem Dimensions=\"3 3\" NumberType=\"Int\" Format=\"XML\">{i} 0 0 1 1 1 1 {np} 3</DataItem>\n\
                 \x20             <DataItem Dimensions=\"{steps} {np} 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">{file}:/{POINTS}</DataItem>\n\
                 \x20           </DataItem>\n\
                 \x20         </Geometry>\n\
                 \x20       </Grid>\n",
                name = escape(&g.name),
                kind = g.kind,
                n = g.cells,
                k = g.per_cell,
                ds = escape(&g.dataset),
            );
        }
        x.push_str("      </Grid>\n");
    }
    x.push_str("    </Grid>\n  </Domain>\n</Xdmf>\n");
    x
}

/// The XDMF side file of the run file `h5_path`: the same path with the
/// extension `xmf`; `None` when that is `h5_path` itself.
pub fn xdmf_path(h5_path: &Path) -> Option<PathBuf> {
    let xmf = h5_path.with_extension("xmf");
    (xmf != h5_path).then_some(xmf)
}

/// Removes a side file left by an earlier run into the same file name, so
/// that no XDMF file describes a file it was not written for.
pub(in crate::output) fn remove_stale(h5_path: &Path) -> Result<(), OutputError> {
    let Some(xmf) = xdmf_path(h5_path) else {
        return Ok(());
    };
    match std::fs::remove_file(&xmf) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(OutputError::Io {
            path: xmf.display().to_string(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Writes the XDMF side file ([`xdmf_path`]) of the run in `h5_path`.
pub(in crate::output) fn write_beside(
    h5_path: &Path,
    mesh: &Mesh,
    times: &[f64],
) -> Result<(), OutputError> {
    let Some(xmf) = xdmf_path(h5_path) else {
        return Ok(());
    };
    let name = h5_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    std::fs::write(&xmf, document(&name, mesh, times)).map_err(|source| OutputError::Io {
        path: xmf.display().to_string(),
        source,
    })
}
