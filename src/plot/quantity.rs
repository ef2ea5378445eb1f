//! What `flexmb plot` can draw from a run file against time: a DOF (`/u`
//! column by its name in `/dofs/names`), an energy (`/energy/<name>`), a
//! method statistic (`/stats/<name>`) or a probe (`/probes/<name>`), each
//! with its unit where the file tells it (layout: `docs/output-format.md`).

use crate::output::{path_component, AttrValue, Hdf5Reader, RunSource};

/// One time history asked for by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Quantity {
    /// A generalized coordinate, e.g. `top.p0`, `pendulum1.theta`, `n3.y`.
    Dof(String),
    /// An energy: `kinetic`, `potential`, `total` or `external_work`.
    Energy(String),
    /// A method statistic per recorded row, e.g. `factorizations`, `nfcn`.
    Stat(String),
    /// A probe of the model (`[[probe]]`).
    Probe(String),
}

/// The energies of `/energy/*`.
const ENERGIES: [&str; 4] = ["kinetic", "potential", "total", "external_work"];

/// Most names listed in an error (a large mesh has millions of DOFs).
const LISTED: usize = 40;

impl Quantity {
    fn name(&self) -> &str {
        match self {
            Quantity::Dof(n) | Quantity::Energy(n) | Quantity::Stat(n) | Quantity::Probe(n) => n,
        }
    }

    /// The kind as the command line spells it (`--dof`, ...).
    fn kind(&self) -> &'static str {
        match self {
            Quantity::Dof(_) => "DOF",
            Quantity::Energy(_) => "energy",
            Quantity::Stat(_) => "statistic",
            Quantity::Probe(_) => "probe",
        }
    }

    /// Legend entry.
    pub(super) fn label(&self) -> String {
        match self {
            Quantity::Energy(n) if n == "external_work" => "external work".into(),
            Quantity::Energy(n) => format!("{n} energy"),
            q => q.name().to_string(),
        }
    }

    /// What the y axis shows for this quantity, without its unit.
    pub(super) fn axis(&self) -> &'static str {
        match self {
            Quantity::Dof(n) => match dof_component(n) {
                "x" | "y" | "z" => "position",
                "theta" => "angle",
                "dx" | "dy" | "dz" => "slope",
                c if c.starts_with('p') => "Euler parameter",
                c if c.starts_with('d') => "director component",
                _ => "coordinate",
            },
            Quantity::Energy(_) => "energy",
            Quantity::Stat(_) => "per recorded step",
            Quantity::Probe(_) => "value",
        }
    }

    /// The unit, where the file tells it (the model's units are taken as SI:
    /// m, rad, J, s); `None` for dimensionless or unknown.
    pub(super) fn unit(&self) -> Option<&'static str> {
        match self {
            Quantity::Dof(n) => match dof_component(n) {
                "x" | "y" | "z" => Some("m"),
                "theta" => Some("rad"),
                _ => None,
            },
            Quantity::Energy(_) => Some("J"),
            Quantity::Stat(n) if n.ends_with("_seconds") => Some("s"),
            _ => None,
        }
    }

    /// The values of this quantity at every recorded row of `file`, or an
    /// error listing the names the file has.
    pub(super) fn read(&self, file: &Hdf5Reader) -> Result<Vec<f64>, String> {
        let unknown = |known: Vec<String>| {
            let n = known.len();
            let mut list = known
                .into_iter()
                .take(LISTED)
                .collect::<Vec<_>>()
                .join(", ");
            if n > LISTED {
                list.push_str(&format!(", ... ({n} in all)"));
            }
            let list = if n == 0 { "none".to_string() } else { list };
            format!(
                "no {} named '{}' (available: {list})",
                self.kind(),
                self.name()
            )
        };
        match self {
            Quantity::Dof(name) => {
                let names = file.strings("dofs/names").map_err(|e| e.to_string())?;
                let Some(col) = names.iter().position(|n| n == name) else {
                    return Err(unknown(names));
                };
                if !file.has("u") {
                    return Err("the file has no /u (recorded without field \"u\")".into());
                }
                let u = file.f64s("u").map_err(|e| e.to_string())?;
                Ok(u.chunks(names.len()).map(|row| row[col]).collect())
            }
            Quantity::Energy(name) => {
                let known: Vec<String> = ENERGIES
                    .iter()
                    .filter(|e| file.has(&format!("energy/{e}")))
                    .map(|e| e.to_string())
                    .collect();
                if !known.iter().any(|k| k == name) {
                    return Err(unknown(known));
                }
                file.f64s(&format!("energy/{name}"))
                    .map_err(|e| e.to_string())
            }
            Quantity::Stat(name) | Quantity::Probe(name) => {
                let (group, prefix, suffix) = match self {
                    Quantity::Stat(_) => ("stats", "stats.", ""),
                    _ => ("probes", "probe.", ".final"),
                };
                let ds = format!("{group}/{}", path_component(name));
                if file.has(&ds) {
                    return file.f64s(&ds).map_err(|e| e.to_string());
                }
                // The names, from the run's final root attributes.
                let attrs = file.root_attrs().map_err(|e| e.to_string())?;
                let known = attrs
                    .iter()
                    .filter_map(|(k, _)| k.strip_prefix(prefix)?.strip_suffix(suffix))
                    .map(str::to_string)
                    .collect();
                Err(unknown(known))
            }
        }
    }
}

/// The component of a DOF name: what follows its last `.` (`top.p0` -> `p0`).
fn dof_component(name: &str) -> &str {
    name.rsplit_once('.').map_or("", |(_, c)| c)
}

/// The model's `title`, read from the model text the run file holds (root
/// attribute `model`), if it has one.
pub(super) fn model_title(file: &Hdf5Reader) -> Option<String> {
    let attrs = file.root_attrs().ok()?;
    let text = attrs.into_iter().find_map(|(k, v)| match v {
        AttrValue::Str(s) if k == "model" => Some(s),
        _ => None,
    })?;
    let table: toml::Table = toml::from_str(&text).ok()?;
    match table.get("title")? {
        toml::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_axes_from_names() {
        let dof = |n: &str| Quantity::Dof(n.into());
        assert_eq!(
            (dof("top.x").axis(), dof("top.x").unit()),
            ("position", Some("m"))
        );
        assert_eq!(
            (dof("b.theta").axis(), dof("b.theta").unit()),
            ("angle", Some("rad"))
        );
        assert_eq!(
            (dof("top.p0").axis(), dof("top.p0").unit()),
            ("Euler parameter", None)
        );
        assert_eq!((dof("n1.dy").axis(), dof("n1.dy").unit()), ("slope", None));
        assert_eq!(dof("r.d2x").axis(), "director component");
        let e = Quantity::Energy("total".into());
        assert_eq!(
            (e.label().as_str(), e.axis(), e.unit()),
            ("total energy", "energy", Some("J"))
        );
        assert_eq!(Quantity::Stat("stab_seconds".into()).unit(), Some("s"));
        assert_eq!(Quantity::Stat("nfcn".into()).unit(), None);
        assert_eq!(Quantity::Probe("tip".into()).unit(), None);
    }
}
