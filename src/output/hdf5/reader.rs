//! Reading a run back ([`read_hdf5`], [`Hdf5Reader`]): the datasets through
//! `rust-hdf5` and the root attributes from the object header, for files of
//! either backend, whole or written by a run still going or killed.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rust_hdf5::format::checksum::checksum_metadata;
use rust_hdf5::format::dense_attr::read_dense_attributes;
use rust_hdf5::format::messages::attr_info::AttributeInfoMessage;
use rust_hdf5::format::messages::attribute::AttributeMessage;
use rust_hdf5::format::messages::continuation::ContinuationMessage;
use rust_hdf5::format::object_header::ObjectHeader;
use rust_hdf5::format::superblock::{
    detect_superblock_version, SuperblockV0V1, SuperblockV2V3, SUPERBLOCK_V2,
};
use rust_hdf5::format::{BlockReader, FormatContext, FormatError, FormatResult};
use rust_hdf5::{DatatypeMessage, H5File};

use crate::output::{
    AttrValue, ConstraintNorms, Energy, Field, NewtonStats, OutputError, Results, RunStatus,
};

use super::layout::{attr, h5_error, Source, COLUMNS, DOF_NAMES, MULT_NAMES, POINTS, STEP_PATH};

/// A run read back from an HDF5 file written by either backend.
///
/// Datasets of fields that were not recorded are empty vectors; `fields`
/// lists the recorded ones. A file of a killed run has `status == "running"`
/// and every step up to the last flush.
#[derive(Debug, Clone, Default)]
pub struct Hdf5Run {
    /// `/time`.
    pub time: Vec<f64>,
    /// `/step`.
    pub step: Vec<u64>,
    /// `/u` rows.
    pub u: Vec<Vec<f64>>,
    /// `/v` rows.
    pub v: Vec<Vec<f64>>,
    /// `/a` rows.
    pub a: Vec<Vec<f64>>,
    /// `/lambda` rows.
    pub lambda: Vec<Vec<f64>>,
    /// `/energy/*`.
    pub energy: Vec<Energy>,
    /// `/constraints/*`.
    pub constraints: Vec<ConstraintNorms>,
    /// `/newton/*`.
    pub newton: Vec<NewtonStats>,
    /// Fields present in the file (`points`, `bodies`, `joints`: when the
    /// file has `/points`, a `/bodies` or a `/joints` group).
    pub fields: Vec<Field>,
    /// `/dofs/names`.
    pub dof_names: Vec<String>,
    /// `/multipliers/names`.
    pub multiplier_names: Vec<String>,
    /// `running`, `completed` or `failed`.
    pub status: String,
    /// Why the run failed (empty otherwise).
    pub failure_reason: String,
    /// Last time reached (NaN if the run did not finish).
    pub t_end_reached: f64,
    /// Integrator name.
    pub integrator: String,
    /// The `integrator.<name>` attributes, prefix stripped, sorted by name.
    pub parameters: Vec<(String, AttrValue)>,
    /// Model file text.
    pub model: String,
    /// flexmb version that wrote the file.
    pub flexmb_version: String,
}

impl Hdf5Run {
    /// The final status, `None` while `running` (e.g. a killed run).
    pub fn run_status(&self) -> Option<RunStatus> {
        match self.status.as_str() {
            "completed" => Some(RunStatus::Completed),
            "failed" => Some(RunStatus::Failed {
                reason: self.failure_reason.clone(),
            }),
            "interrupted" => Some(RunStatus::Interrupted {
                reason: self.failure_reason.clone(),
            }),
            _ => None,
        }
    }

    /// Number of steps.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// Whether no step was recorded.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }
}

/// Read access to a run file, implemented on each backend's library
/// ([`Hdf5Reader`], and `Hdf5CReader` with feature `hdf5-c`): whole datasets
/// by path, e.g. `/mesh/nodes` or `/points`, which [`read_hdf5`] does not cover.
pub trait RunSource {
    /// File path, for errors.
    fn path(&self) -> &Path;
    /// Whether the dataset (or a group holding a dataset) exists.
    fn has(&self, ds: &str) -> bool;
    /// Dataset dimensions.
    fn shape(&self, ds: &str) -> Result<Vec<usize>, OutputError>;
    /// All values of a non-empty f64 dataset, row-major.
    fn f64s(&self, ds: &str) -> Result<Vec<f64>, OutputError>;
    /// All values of a non-empty unsigned integer dataset.
    fn u64s(&self, ds: &str) -> Result<Vec<u64>, OutputError>;
    /// All values of a non-empty signed integer dataset.
    fn i64s(&self, ds: &str) -> Result<Vec<i64>, OutputError>;
    /// All values of a non-empty string dataset.
    fn strings(&self, ds: &str) -> Result<Vec<String>, OutputError>;
    /// Every root attribute.
    fn root_attrs(&self) -> Result<Vec<(String, AttrValue)>, OutputError>;
    /// The paths of every dataset, without the leading `/`, in the file's
    /// order (the default lists none: such a source gives [`Results`]
    /// without probes, statistics or mesh).
    fn datasets(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A dataset read with its shape.
struct Raw<T> {
    shape: Vec<usize>,
    data: Vec<T>,
}

impl<T: Clone> Raw<T> {
    fn read(
        src: &impl RunSource,
        ds: &str,
        get: impl Fn(&str) -> Result<Vec<T>, OutputError>,
    ) -> Result<Self, OutputError> {
        let shape = src.shape(ds)?;
        let data = if shape.iter().product::<usize>() == 0 {
            Vec::new()
        } else {
            get(ds)?
        };
        Ok(Raw { shape, data })
    }

    fn rows(&self) -> usize {
        self.shape.first().copied().unwrap_or(0)
    }

    /// The first `steps` values of a `[steps]` dataset.
    fn column(&self, steps: usize) -> Vec<T> {
        self.data.iter().take(steps).cloned().collect()
    }

    /// The first `steps` rows of a `[steps, n]` dataset.
    fn matrix(&self, steps: usize) -> Vec<Vec<T>> {
        match self.shape.get(1).copied() {
            Some(0) => vec![Vec::new(); steps],
            n => self
                .data
                .chunks(n.unwrap_or(1))
                .take(steps)
                .map(<[T]>::to_vec)
                .collect(),
        }
    }
}

/// Reads a run written by [`super::Hdf5Recorder`] or the `hdf5-c` backend
/// into [`Results`]: every recorded history with the probes, the method's
/// statistics and the mesh.
///
/// A file whose writer was killed is read up to its last flush; datasets of
/// different lengths (a kill during a flush) are cut to the shortest.
///
/// ```
/// use flexmb::integrate::IntegratorSpec;
/// use flexmb::input::load_model_file;
/// use flexmb::output::read_hdf5;
/// use flexmb::run::Simulation;
///
/// let file = load_model_file(concat!(env!("CARGO_MANIFEST_DIR"), "/models/double_pendulum.toml"))?;
/// let config = file.integrator(&IntegratorSpec { t_end: Some(0.1), ..Default::default() })?;
/// let path = std::env::temp_dir().join(format!("flexmb-doc-read-{}.h5", std::process::id()));
/// Simulation::new(file.model).run_to_file(&config, &file.text, &file.output, Some(&path), &mut |_| {})?;
/// let run = read_hdf5(&path)?;
/// assert_eq!(run.dof("pendulum1.x")?[0], 1.0);
/// assert_eq!(run.count("newton_iterations")?.len(), 11);
/// assert!(run.dof("pendulum3.x").unwrap_err().to_string().contains("pendulum1.x"));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_hdf5(path: impl AsRef<Path>) -> Result<Results, OutputError> {
    Results::from_source(&Hdf5Reader::open(path.as_ref())?)
}

/// Reads a run as [`read_hdf5`] does into the file-shaped [`Hdf5Run`]
/// (rows as vectors, no probes, statistics or mesh).
pub fn read_hdf5_run(path: impl AsRef<Path>) -> Result<Hdf5Run, OutputError> {
    let path = path.as_ref();
    assemble_run(&Hdf5Reader::open(path)?)
}

/// Builds an [`Hdf5Run`] from any backend's reader.
pub(in crate::output) fn assemble_run(src: &impl RunSource) -> Result<Hdf5Run, OutputError> {
    let path = src.path();
    let time = Raw::read(src, "time", |d| src.f64s(d))?;
    let step = Raw::read(src, STEP_PATH, |d| src.u64s(d))?;
    let mut f64s: Vec<(Source, Raw<f64>)> = Vec::new();
    let mut iterations = None;
    let mut fields = Vec::new();
    for s in COLUMNS
        .iter()
        .filter(|s| s.field.is_some() && src.has(s.path))
    {
        if let Some(f) = s.field.filter(|f| !fields.contains(f)) {
            fields.push(f);
        }
        if s.source == Source::Iterations {
            iterations = Some(Raw::read(src, s.path, |d| src.u64s(d))?);
        } else {
            f64s.push((s.source, Raw::read(src, s.path, |d| src.f64s(d))?));
        }
    }
    for (group, f) in [
        (POINTS, Field::Points),
        ("bodies", Field::Bodies),
        ("joints", Field::Joints),
    ] {
        if src.has(group) {
            fields.push(f);
        }
    }
    // A kill during a flush can leave some datasets longer than others.
    let steps = f64s
        .iter()
        .map(|(_, r)| r.rows())
        .chain(iterations.iter().map(Raw::rows))
        .fold(time.rows().min(step.rows()), usize::min);

    let mut run = Hdf5Run {
        time: time.column(steps),
        step: step.column(steps),
        fields,
        ..Hdf5Run::default()
    };
    let col = |src: Source| -> Vec<f64> {
        f64s.iter()
            .find(|(s, _)| *s == src)
            .map(|(_, r)| r.column(steps))
            .unwrap_or_else(|| vec![0.0; steps])
    };
    for (source, raw) in &f64s {
        match source {
            Source::U => run.u = raw.matrix(steps),
            Source::V => run.v = raw.matrix(steps),
            Source::A => run.a = raw.matrix(steps),
            Source::Lambda => run.lambda = raw.matrix(steps),
            _ => {}
        }
    }
    /// The values of the columns `sources` step by step.
    fn rows<const N: usize>(
        col: impl Fn(Source) -> Vec<f64>,
        sources: [Source; N],
        steps: usize,
    ) -> impl Iterator<Item = [f64; N]> {
        let cols = sources.map(col);
        (0..steps).map(move |i| std::array::from_fn(|c| cols[c][i]))
    }
    if run.fields.contains(&Field::Energy) {
        use Source::{ExternalWork, Kinetic, Potential, Total};
        run.energy = rows(&col, [Kinetic, Potential, Total, ExternalWork], steps)
            .map(|[kinetic, potential, total, external_work]| Energy {
                kinetic,
                potential,
                total,
                external_work,
            })
            .collect();
    }
    if run.fields.contains(&Field::Constraints) {
        use Source::{CAcceleration, CPosition, CVelocity};
        run.constraints = rows(&col, [CPosition, CVelocity, CAcceleration], steps)
            .map(|[position, velocity, acceleration]| ConstraintNorms {
                position,
                velocity,
                acceleration,
            })
            .collect();
    }
    if let Some(it) = &iterations {
        let r = col(Source::Residual);
        run.newton = it
            .column(steps)
            .into_iter()
            .zip(r)
            .map(|(i, residual)| {
                let iterations = u32::try_from(i)
                    .map_err(|e| h5_error(path, format!("/newton/iterations: {e}")))?;
                Ok(NewtonStats {
                    iterations,
                    residual,
                })
            })
            .collect::<Result<_, OutputError>>()?;
    }
    for (ds, out) in [
        (DOF_NAMES, &mut run.dof_names),
        (MULT_NAMES, &mut run.multiplier_names),
    ] {
        if src.shape(ds)?.iter().product::<usize>() > 0 {
            *out = src.strings(ds)?;
        }
    }

    let mut params = Vec::new();
    for (name, value) in src.root_attrs()? {
        match (name.as_str(), value) {
            (attr::STATUS, AttrValue::Str(s)) => run.status = s,
            (attr::FAILURE_REASON, AttrValue::Str(s)) => run.failure_reason = s,
            (attr::T_END_REACHED, AttrValue::F64(x)) => run.t_end_reached = x,
            (attr::INTEGRATOR, AttrValue::Str(s)) => run.integrator = s,
            (attr::MODEL, AttrValue::Str(s)) => run.model = s,
            (attr::VERSION, AttrValue::Str(s)) => run.flexmb_version = s,
            (n, v) => {
                if let Some(p) = n.strip_prefix(attr::PARAM_PREFIX) {
                    params.push((p.to_string(), v));
                }
            }
        }
    }
    params.sort_by(|a, b| a.0.cmp(&b.0));
    run.parameters = params;
    Ok(run)
}

/// [`RunSource`] on `rust-hdf5`: reads files of either backend.
pub struct Hdf5Reader {
    path: PathBuf,
    file: H5File,
    names: Vec<String>,
}

impl Hdf5Reader {
    /// Opens a file for reading.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OutputError> {
        let path = path.as_ref();
        let file = H5File::open(path).map_err(|e| h5_error(path, e))?;
        let names = file
            .dataset_names()
            .into_iter()
            .map(|n| n.trim_start_matches('/').to_string())
            .collect();
        Ok(Hdf5Reader {
            path: path.to_path_buf(),
            file,
            names,
        })
    }

    fn dataset(&self, ds: &str) -> Result<rust_hdf5::H5Dataset, OutputError> {
        self.file
            .dataset(ds)
            .map_err(|e| h5_error(&self.path, format!("/{ds}: {e}")))
    }

    fn err(&self, ds: &str) -> impl Fn(rust_hdf5::Hdf5Error) -> OutputError + '_ {
        let ds = ds.to_string();
        move |e| h5_error(&self.path, format!("/{ds}: {e}"))
    }
}

impl RunSource for Hdf5Reader {
    fn path(&self) -> &Path {
        &self.path
    }

    fn has(&self, ds: &str) -> bool {
        // A group exists when a dataset lies below it.
        self.names.iter().any(|n| {
            n.strip_prefix(ds)
                .is_some_and(|r| r.is_empty() || r.starts_with('/'))
        })
    }

    fn shape(&self, ds: &str) -> Result<Vec<usize>, OutputError> {
        Ok(self.dataset(ds)?.shape())
    }

    fn f64s(&self, ds: &str) -> Result<Vec<f64>, OutputError> {
        self.dataset(ds)?.read_raw::<f64>().map_err(self.err(ds))
    }

    fn u64s(&self, ds: &str) -> Result<Vec<u64>, OutputError> {
        self.dataset(ds)?
            .read_numeric_as::<u64>()
            .map_err(self.err(ds))
    }

    fn i64s(&self, ds: &str) -> Result<Vec<i64>, OutputError> {
        self.dataset(ds)?
            .read_numeric_as::<i64>()
            .map_err(self.err(ds))
    }

    fn strings(&self, ds: &str) -> Result<Vec<String>, OutputError> {
        self.dataset(ds)?.read_strings().map_err(self.err(ds))
    }

    fn datasets(&self) -> Vec<String> {
        self.names.clone()
    }

    fn root_attrs(&self) -> Result<Vec<(String, AttrValue)>, OutputError> {
        // rust-hdf5 reads root attributes only as strings: numbers come from
        // the raw attribute messages.
        let numeric = read_root_attribute_messages(&self.path)?;
        read_attributes(&self.path, self.file.attr_names(), |name| {
            Ok(match numeric.iter().find(|m| m.name == name) {
                Some(msg) => {
                    numeric_attr(msg).ok_or_else(|| format!("unsupported type {}", msg.datatype))?
                }
                None => AttrValue::Str(self.file.attr_string(name)?),
            })
        })
    }
}

/// The root attributes `names` of the file at `path` in order, each read by
/// `value`; an error names the file (and the attribute).
pub(super) fn read_attributes<E: std::fmt::Display>(
    path: &Path,
    names: Result<Vec<String>, E>,
    mut value: impl FnMut(&str) -> Result<AttrValue, Box<dyn std::error::Error>>,
) -> Result<Vec<(String, AttrValue)>, OutputError> {
    let names = names.map_err(|e| h5_error(path, e))?;
    names
        .into_iter()
        .map(|name| match value(&name) {
            Ok(v) => Ok((name, v)),
            Err(e) => Err(h5_error(path, format!("attribute {name}: {e}"))),
        })
        .collect()
}

/// The value of a numeric scalar attribute (f64 or a signed/unsigned integer).
fn numeric_attr(msg: &AttributeMessage) -> Option<AttrValue> {
    let bytes = |n: usize| -> Option<[u8; 8]> {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(msg.data.get(..n)?);
        Some(b)
    };
    match &msg.datatype {
        DatatypeMessage::FloatingPoint {
            size: 8,
            byte_order,
            ..
        } if *byte_order == rust_hdf5::ByteOrder::LittleEndian => {
            Some(AttrValue::F64(f64::from_le_bytes(bytes(8)?)))
        }
        DatatypeMessage::FixedPoint {
            size,
            byte_order,
            signed,
            ..
        } if *byte_order == rust_hdf5::ByteOrder::LittleEndian && (1..=8).contains(size) => {
            let n = *size as usize;
            let mut b = bytes(n)?;
            if *signed && b[n - 1] & 0x80 != 0 {
                b[n..].fill(0xff);
            }
            Some(AttrValue::I64(i64::from_le_bytes(b)))
        }
        _ => None,
    }
}

/// Reads blocks of a file for the `rust-hdf5` format decoders.
struct FileBlocks(File);

impl BlockReader for FileBlocks {
    fn read_block(&mut self, offset: u64, len: usize) -> FormatResult<Vec<u8>> {
        let io = |e: std::io::Error| FormatError::InvalidData(e.to_string());
        self.0.seek(SeekFrom::Start(offset)).map_err(io)?;
        // `len` comes from the file: do not trust it for the allocation.
        let mut buf = Vec::with_capacity(len.min(1 << 20));
        (&mut self.0)
            .take(len as u64)
            .read_to_end(&mut buf)
            .map_err(io)?;
        Ok(buf)
    }
}

/// The numeric root attribute messages of a file.
///
/// `rust-hdf5` 0.7.9 reads root attributes only as strings, so this walks
/// the root object header (v1 or v2, continuation chunks, compact or dense
/// attribute storage) with the crate's public format decoders.
fn read_root_attribute_messages(path: &Path) -> Result<Vec<AttributeMessage>, OutputError> {
    let err = |e: &dyn std::fmt::Display| h5_error(path, format!("root attributes: {e}"));
    let file = File::open(path).map_err(|source| OutputError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut blocks = FileBlocks(file);
    let head = blocks.read_block(0, 256).map_err(|e| err(&e))?;
    let version = detect_superblock_version(&head).map_err(|e| err(&e))?;
    let (offsets, lengths, base, root) = if version >= SUPERBLOCK_V2 {
        let sb = SuperblockV2V3::decode(&head).map_err(|e| err(&e))?;
        let root = sb.root_group_object_header_address;
        (sb.sizeof_offsets, sb.sizeof_lengths, sb.base_address, root)
    } else {
        let sb = SuperblockV0V1::decode(&head).map_err(|e| err(&e))?;
        let root = sb.root_symbol_table_entry.obj_header_addr;
        (sb.sizeof_offsets, sb.sizeof_lengths, sb.base_address, root)
    };
    if base != 0 {
        return Err(err(&"files with a userblock are not supported"));
    }
    let ctx = FormatContext {
        sizeof_addr: offsets,
        sizeof_size: lengths,
    };

    // Chunk 0: read generously, the decoder stops at the recorded size.
    let buf = blocks.read_block(root, 1 << 16).map_err(|e| err(&e))?;
    let (header, _) = ObjectHeader::decode_any(&buf).map_err(|e| err(&e))?;
    let v1 = buf.first() == Some(&1);
    let creation_order = header.flags & 0x04 != 0;
    let mut messages: Vec<(u8, Vec<u8>)> = header
        .messages
        .into_iter()
        .map(|m| (m.msg_type, m.data))
        .collect();
    let mut i = 0;
    while i < messages.len() {
        if messages[i].0 == 0x10 {
            let (cont, _) =
                ContinuationMessage::decode(&messages[i].1, &ctx).map_err(|e| err(&e))?;
            let chunk = blocks
                .read_block(cont.offset, cont.length as usize)
                .map_err(|e| err(&e))?;
            messages.extend(parse_continuation(&chunk, v1, creation_order).map_err(|e| err(&e))?);
        }
        i += 1;
    }
    let mut attrs = Vec::new();
    for (ty, data) in &messages {
        match ty {
            0x0C => attrs.push(AttributeMessage::decode(data, &ctx).map_err(|e| err(&e))?.0),
            0x15 => {
                let (info, _) = AttributeInfoMessage::decode(data, &ctx).map_err(|e| err(&e))?;
                for entry in read_dense_attributes(&info, &ctx, &mut blocks).map_err(|e| err(&e))? {
                    if let Some(a) = entry.readable() {
                        attrs.push(a.clone());
                    }
                }
            }
            _ => {}
        }
    }
    attrs.retain(|a| {
        !matches!(
            a.datatype,
            DatatypeMessage::VarLenString { .. } | DatatypeMessage::FixedString { .. }
        )
    });
    Ok(attrs)
}

/// The `(type, data)` messages of an object header continuation chunk.
fn parse_continuation(
    chunk: &[u8],
    v1: bool,
    creation_order: bool,
) -> Result<Vec<(u8, Vec<u8>)>, String> {
    let mut out = Vec::new();
    if v1 {
        // type u16, size u16, flags u8, 3 reserved; data padded to 8 bytes.
        let mut pos = 0;
        while pos + 8 <= chunk.len() {
            let ty = u16::from_le_bytes([chunk[pos], chunk[pos + 1]]);
            let size = u16::from_le_bytes([chunk[pos + 2], chunk[pos + 3]]) as usize;
            let start = pos + 8;
            let data = chunk
                .get(start..start + size)
                .ok_or("v1 continuation overrun")?;
            if ty != 0 {
                out.push((ty as u8, data.to_vec()));
            }
            pos = start + size.next_multiple_of(8);
        }
    } else {
        // "OCHK", messages (type u8, size u16, flags u8 [, order u16]), checksum.
        if chunk.len() < 8 || &chunk[..4] != b"OCHK" {
            return Err("continuation chunk without OCHK signature".into());
        }
        let end = chunk.len() - 4;
        let stored =
            u32::from_le_bytes([chunk[end], chunk[end + 1], chunk[end + 2], chunk[end + 3]]);
        if stored != checksum_metadata(&chunk[..end]) {
            return Err("continuation chunk checksum mismatch".into());
        }
        let head = if creation_order { 6 } else { 4 };
        let mut pos = 4;
        while pos + head <= end {
            let ty = chunk[pos];
            let size = u16::from_le_bytes([chunk[pos + 1], chunk[pos + 2]]) as usize;
            let start = pos + head;
            let data = chunk
                .get(start..start + size)
                .ok_or("OCHK message overrun")?;
            out.push((ty, data.to_vec()));
            pos = start + size;
        }
    }
    Ok(out)
}
