//! The reference HDF5 backend on the C library (`hdf5-metno`, feature `hdf5-c`):
//! [`Hdf5CRecorder`] writes the same layout as [`super::Hdf5Recorder`] and
//! [`read_hdf5_c`] reads either backend's files through libhdf5.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use hdf5::plist::file_access::{
    CacheDecreaseMode, CacheIncreaseMode, FileAccess, FlashIncreaseMode,
};
use hdf5::plist::file_create::FileSpaceStrategy;
use hdf5::types::{FloatSize, TypeDescriptor, VarLenAscii, VarLenUnicode};
use hdf5::{Dataset, Extent, File, H5Type, Hyperslab, SimpleExtents, SliceOrIndex};
use ndarray::{ArrayViewD, IxDyn};

use super::layout::{h5_error, Column, Dtype, FixedData, FixedDataset};
use super::reader::{assemble_run, read_attributes, Hdf5Run, RunSource};
use super::streamer::{streaming_recorder, Backend, ColumnBuf, Streamer};
use crate::output::{AttrValue, OutputConfig, OutputError};

/// Streams a run into an HDF5 file with the HDF5 C library.
///
/// The layout is the one of [`super::Hdf5Recorder`]; the file is flushed
/// with `H5Fflush` every `flush_seconds` (see `docs/output-format.md` for
/// what a killed run leaves).
pub struct Hdf5CRecorder {
    inner: Streamer<CBackend>,
}

impl Hdf5CRecorder {
    /// Creates (truncates) the file at `path`; the layout is written by `begin`.
    pub fn create(path: impl AsRef<Path>, config: OutputConfig) -> Result<Self, OutputError> {
        let inner = Streamer::create(path.as_ref(), config, |path| {
            Ok(CBackend {
                path: path.to_path_buf(),
                file: Some(create_file(path).map_err(|e| h5_error(path, e))?),
                columns: Vec::new(),
            })
        })?;
        Ok(Hdf5CRecorder { inner })
    }
}

streaming_recorder!(Hdf5CRecorder);

/// Creates the file so that what is on disk after an `H5Fflush` stays as it
/// is until the next one: dirty metadata is never evicted between flushes
/// and freed file space is never reused.
fn create_file(path: &Path) -> hdf5::Result<File> {
    let mut mdc = FileAccess::try_new()?.mdc_config();
    mdc.evictions_enabled = false;
    mdc.incr_mode = CacheIncreaseMode::Off;
    mdc.flash_incr_mode = FlashIncreaseMode::Off;
    mdc.decr_mode = CacheDecreaseMode::Off;
    File::with_options()
        .with_fapl(|p| p.mdc_config(&mdc))
        .with_fcpl(|p| p.file_space_strategy(FileSpaceStrategy::None))
        .create(path)
}

/// One open streamed dataset.
struct CColumn {
    ds: Dataset,
    /// Shape and chunk geometry.
    geom: Column,
    /// Rows the dataset has on disk.
    rows: u64,
}

struct CBackend {
    path: PathBuf,
    /// `None` once closed.
    file: Option<File>,
    columns: Vec<CColumn>,
}

/// Current and maximum extents of `c` after `rows` steps.
fn extents(c: &Column, rows: u64) -> SimpleExtents {
    let e = c
        .dims(rows)
        .into_iter()
        .zip(c.max_dims())
        .map(|(d, m)| Extent::new(d as usize, m.map(|m| m as usize)))
        .collect();
    SimpleExtents::from_vec(e)
}

fn dims(c: &Column, rows: u64) -> Vec<usize> {
    c.dims(rows).into_iter().map(|d| d as usize).collect()
}

impl CBackend {
    fn file(&self) -> Result<&File, OutputError> {
        self.file
            .as_ref()
            .ok_or_else(|| h5_error(&self.path, "file already closed"))
    }

    fn new_column(&self, c: &Column, compression: u8) -> Result<Dataset, OutputError> {
        let file = self.file()?;
        let chunk: Vec<usize> = c.chunk().iter().map(|&x| x as usize).collect();
        // Cache a whole chunk-row band, so that row writes never evict a chunk.
        let tiles = c.row_len().div_ceil(c.chunk_cols).max(1);
        let band = tiles * c.chunk_rows * c.chunk_cols * c.dtype().size();
        let mut b = match c.dtype() {
            Dtype::F64 => file.new_dataset::<f64>(),
            Dtype::U64 => file.new_dataset::<u64>(),
            Dtype::U32 => file.new_dataset::<u32>(),
        }
        .chunk(chunk)
        .chunk_cache((8 * tiles + 1).max(521), band.max(1 << 20), 1.0);
        if compression > 0 {
            b = b.shuffle().deflate(compression);
        }
        b.shape(extents(c, 0))
            .create(c.path.as_str())
            .map_err(|e| h5_error(&self.path, format!("/{}: {e}", c.path)))
    }

    fn resize_all(&mut self, rows: u64) -> Result<(), OutputError> {
        for c in &mut self.columns {
            if c.rows != rows {
                c.ds.resize(dims(&c.geom, rows))
                    .map_err(|e| h5_error(&self.path, format!("resize: {e}")))?;
                c.rows = rows;
            }
        }
        Ok(())
    }
}

/// Writes rows `skip..` of `data` (whole rows of `c`, first row `first`) to
/// `ds` as one hyperslab.
fn write_rows<T: H5Type>(
    ds: &Dataset,
    data: &[T],
    c: &Column,
    first: usize,
    skip: usize,
) -> hdf5::Result<()> {
    let n = c.row_len();
    let rows = data.len() / n;
    if skip >= rows {
        return Ok(());
    }
    let shape = dims(c, (rows - skip) as u64);
    let mut sel = vec![SliceOrIndex::from(first + skip..first + rows)];
    sel.extend(shape[1..].iter().map(|_| SliceOrIndex::from(..)));
    let view = ArrayViewD::from_shape(IxDyn(&shape), &data[skip * n..])?;
    ds.as_writer().write_slice(view, Hyperslab::from(sel))
}

impl Backend for CBackend {
    fn create_group(&mut self, g: &str) -> Result<(), OutputError> {
        self.file()?
            .create_group(g)
            .map(drop)
            .map_err(|e| h5_error(&self.path, format!("/{g}: {e}")))
    }

    fn create_column(&mut self, c: &Column, compression: u8) -> Result<(), OutputError> {
        let ds = self.new_column(c, compression)?;
        self.columns.push(CColumn {
            ds,
            geom: c.clone(),
            rows: 0,
        });
        Ok(())
    }

    fn write_fixed(&mut self, f: &FixedDataset) -> Result<(), OutputError> {
        let ds = f.path.as_str();
        let err = |e: &dyn std::fmt::Display| h5_error(&self.path, format!("/{ds}: {e}"));
        fn create<T: H5Type>(file: &File, ds: &str, shape: &[usize], v: &[T]) -> hdf5::Result<()> {
            let d = file.new_dataset::<T>().shape(shape).create(ds)?;
            if v.is_empty() {
                Ok(())
            } else {
                d.write_raw(v)
            }
        }
        let file = self.file()?;
        match &f.data {
            FixedData::F64(v) => create(file, ds, &f.shape, v),
            FixedData::I64(v) => create(file, ds, &f.shape, v),
            FixedData::Str(names) => {
                let values = names
                    .iter()
                    .map(|s| VarLenUnicode::from_str(s).map_err(|e| err(&e)))
                    .collect::<Result<Vec<_>, _>>()?;
                create(file, ds, &f.shape, &values)
            }
        }
        .map_err(|e| err(&e))
    }

    fn set_attr(&mut self, name: &str, value: &AttrValue) -> Result<(), OutputError> {
        let file = self.file()?;
        let err =
            |e: &dyn std::fmt::Display| h5_error(&self.path, format!("attribute {name}: {e}"));
        if file
            .attr_names()
            .map_err(|e| err(&e))?
            .iter()
            .any(|n| n == name)
        {
            file.delete_attr(name).map_err(|e| err(&e))?;
        }
        let r = match value {
            AttrValue::F64(x) => file
                .new_attr::<f64>()
                .shape(())
                .create(name)
                .and_then(|a| a.write_scalar(x)),
            AttrValue::I64(x) => file
                .new_attr::<i64>()
                .shape(())
                .create(name)
                .and_then(|a| a.write_scalar(x)),
            AttrValue::Str(s) => {
                let v = VarLenUnicode::from_str(s).map_err(|e| err(&e))?;
                file.new_attr::<VarLenUnicode>()
                    .shape(())
                    .create(name)
                    .and_then(|a| a.write_scalar(&v))
            }
        };
        r.map_err(|e| err(&e))
    }

    fn start(&mut self) -> Result<(), OutputError> {
        self.file()?
            .flush()
            .map_err(|e| h5_error(&self.path, format!("flush: {e}")))
    }

    fn write_band(
        &mut self,
        col: usize,
        first_row: u64,
        data: &ColumnBuf,
        _last: bool,
    ) -> Result<(), OutputError> {
        let c = &mut self.columns[col];
        let n = c.geom.row_len();
        if n == 0 {
            return Ok(());
        }
        let end = first_row + (data.len() / n) as u64;
        // Rows already in the file (a partial band flushed before) are kept.
        let skip = (c.rows.saturating_sub(first_row) as usize).min(data.len() / n);
        if end > c.rows {
            c.ds.resize(dims(&c.geom, end))
                .map_err(|e| h5_error(&self.path, format!("resize: {e}")))?;
            c.rows = end;
        }
        let first = first_row as usize;
        match data {
            ColumnBuf::F64(v) => write_rows(&c.ds, v, &c.geom, first, skip),
            ColumnBuf::U64(v) => write_rows(&c.ds, v, &c.geom, first, skip),
            ColumnBuf::U32(v) => write_rows(&c.ds, v, &c.geom, first, skip),
        }
        .map_err(|e| h5_error(&self.path, format!("write rows {first}..{end}: {e}")))
    }

    fn flush(&mut self, rows: u64) -> Result<(), OutputError> {
        self.resize_all(rows)?;
        self.file()?
            .flush()
            .map_err(|e| h5_error(&self.path, format!("flush: {e}")))
    }

    fn set_rows(&mut self, rows: u64) -> Result<(), OutputError> {
        self.resize_all(rows)
    }

    fn close(&mut self) -> Result<(), OutputError> {
        // Every dataset handle must be closed for H5Fclose to close the file.
        self.columns.clear();
        let file = self
            .file
            .take()
            .ok_or_else(|| h5_error(&self.path, "file already closed"))?;
        file.close()
            .map_err(|e| h5_error(&self.path, format!("close: {e}")))
    }
}

// ---------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------

/// Reads a run written by either backend through the HDF5 C library.
pub fn read_hdf5_c(path: impl AsRef<Path>) -> Result<Hdf5Run, OutputError> {
    let path = path.as_ref();
    assemble_run(&Hdf5CReader::open(path)?)
}

/// [`RunSource`] on libhdf5.
pub struct Hdf5CReader {
    path: PathBuf,
    file: File,
}

impl Hdf5CReader {
    /// Opens a file for reading.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OutputError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| h5_error(path, e))?;
        Ok(Hdf5CReader {
            path: path.to_path_buf(),
            file,
        })
    }

    fn dataset(&self, ds: &str) -> Result<Dataset, OutputError> {
        self.file.dataset(ds).map_err(|e| self.err(ds, e))
    }

    fn err(&self, ds: &str, e: impl std::fmt::Display) -> OutputError {
        h5_error(&self.path, format!("/{ds}: {e}"))
    }
}

impl RunSource for Hdf5CReader {
    fn path(&self) -> &Path {
        &self.path
    }

    fn has(&self, ds: &str) -> bool {
        // H5Lexists needs every intermediate group to exist.
        let mut prefix = String::new();
        ds.split('/').all(|part| {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            self.file.link_exists(&prefix)
        })
    }

    fn shape(&self, ds: &str) -> Result<Vec<usize>, OutputError> {
        Ok(self.dataset(ds)?.shape())
    }

    fn f64s(&self, ds: &str) -> Result<Vec<f64>, OutputError> {
        self.dataset(ds)?
            .read_raw::<f64>()
            .map_err(|e| self.err(ds, e))
    }

    fn u64s(&self, ds: &str) -> Result<Vec<u64>, OutputError> {
        self.dataset(ds)?
            .read_raw::<u64>()
            .map_err(|e| self.err(ds, e))
    }

    fn i64s(&self, ds: &str) -> Result<Vec<i64>, OutputError> {
        self.dataset(ds)?
            .read_raw::<i64>()
            .map_err(|e| self.err(ds, e))
    }

    fn strings(&self, ds: &str) -> Result<Vec<String>, OutputError> {
        let v = self
            .dataset(ds)?
            .read_raw::<VarLenUnicode>()
            .map_err(|e| self.err(ds, e))?;
        Ok(v.iter().map(|s| s.as_str().to_string()).collect())
    }

    fn root_attrs(&self) -> Result<Vec<(String, AttrValue)>, OutputError> {
        read_attributes(&self.path, self.file.attr_names(), |name| {
            let a = self.file.attr(name)?;
            Ok(match a.dtype().and_then(|t| t.to_descriptor())? {
                TypeDescriptor::Float(FloatSize::U8) => AttrValue::F64(a.read_scalar::<f64>()?),
                TypeDescriptor::Integer(_) => AttrValue::I64(a.read_scalar::<i64>()?),
                TypeDescriptor::VarLenUnicode => {
                    AttrValue::Str(a.read_scalar::<VarLenUnicode>()?.as_str().to_string())
                }
                TypeDescriptor::VarLenAscii => {
                    AttrValue::Str(a.read_scalar::<VarLenAscii>()?.as_str().to_string())
                }
                _ => return Err("a type other than a number or a string".into()),
            })
        })
    }
}
