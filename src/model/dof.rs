//! The DOF map: one entry per global unknown, with its owner, label and kind.

/// What a degree of freedom measures (used for gravity loads and labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DofKind {
    /// A Cartesian position component (axis 0, 1, 2 = x, y, z).
    Translation(u8),
    /// A planar rotation angle.
    Rotation,
    /// A component (axis 0, 1, 2) of a beam node's slope vector dr/dx (no gravity).
    Slope(u8),
    /// An Euler parameter (0..3) of a 3-D rigid body (no gravity).
    EulerParameter(u8),
    /// A director component `3 i + axis` (0..9) of a 3-D director body (no gravity).
    Director(u8),
}

/// Global DOF numbering with a label per DOF, e.g. `pendulum1.theta`.
#[derive(Debug, Clone, Default)]
pub struct DofMap {
    names: Vec<String>,
    kinds: Vec<DofKind>,
    /// One entry per [`DofMap::add`] call: the owner and its first DOF.
    owners: Vec<(String, usize)>,
}

impl DofMap {
    /// Appends DOFs for one entity and returns their global indices.
    pub fn add(&mut self, owner: &str, comps: &[(&str, DofKind)]) -> Vec<usize> {
        self.owners.push((owner.to_string(), self.names.len()));
        comps
            .iter()
            .map(|(label, kind)| {
                self.names.push(format!("{owner}.{label}"));
                self.kinds.push(*kind);
                self.names.len() - 1
            })
            .collect()
    }

    /// Number of DOFs.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no DOFs.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Label of DOF `i`.
    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    /// All labels.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The entities (nodes, bodies) in the order they were added, each with
    /// the contiguous range of its DOFs.
    pub fn entities(&self) -> impl Iterator<Item = (&str, std::ops::Range<usize>)> + '_ {
        self.owners.iter().enumerate().map(|(k, (name, first))| {
            let end = self.owners.get(k + 1).map_or(self.names.len(), |o| o.1);
            (name.as_str(), *first..end)
        })
    }

    /// Kind of DOF `i`.
    pub fn kind(&self, i: usize) -> DofKind {
        self.kinds[i]
    }
}

/// Component labels and kinds of a point node in `dim` dimensions.
pub fn point_components(dim: usize) -> Vec<(&'static str, DofKind)> {
    ["x", "y", "z"][..dim]
        .iter()
        .enumerate()
        .map(|(a, l)| (*l, DofKind::Translation(a as u8)))
        .collect()
}

/// Component labels and kinds of a planar rigid body (x, y, theta).
pub const BODY2D_COMPONENTS: [(&str, DofKind); 3] = [
    ("x", DofKind::Translation(0)),
    ("y", DofKind::Translation(1)),
    ("theta", DofKind::Rotation),
];

/// Component labels and kinds of a beam node in `dim` dimensions: position
/// (x, y[, z]), then slope vector (dx, dy[, dz]).
pub fn beam_components(dim: usize) -> Vec<(&'static str, DofKind)> {
    let mut c = point_components(dim);
    c.extend(
        ["dx", "dy", "dz"][..dim]
            .iter()
            .enumerate()
            .map(|(a, l)| (*l, DofKind::Slope(a as u8))),
    );
    c
}
