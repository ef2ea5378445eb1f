//! The pure-Rust backend ([`Hdf5Recorder`]) on `rust-hdf5`'s SWMR writer,
//! and [`write_table`] for summary tables.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rust_hdf5::format::superblock::SuperblockV2V3;
use rust_hdf5::swmr::SwmrFileWriter;
use rust_hdf5::{DatatypeMessage, FilterPipeline, H5Type};

use crate::output::{AttrValue, OutputConfig, OutputError};

use super::layout::{h5_error, path_component, Column, Dtype, FixedData, FixedDataset};
use super::streamer::{streaming_recorder, Backend, ColumnBuf, Streamer};

/// Streams a run into an HDF5 file with the pure-Rust `rust-hdf5` crate.
///
/// The file is written with the SWMR protocol: every `flush_seconds` the
/// chunk data, chunk indices, dataset headers and superblock are written in
/// that order and synced, so a killed run leaves a readable file with every
/// step up to the last flush (see `docs/output-format.md`).
pub struct Hdf5Recorder {
    inner: Streamer<RustBackend>,
}

impl Hdf5Recorder {
    /// Creates (truncates) the file at `path`; the layout is written by `begin`.
    pub fn create(path: impl AsRef<Path>, config: OutputConfig) -> Result<Self, OutputError> {
        let inner = Streamer::create(path.as_ref(), config, RustBackend::open)?;
        Ok(Hdf5Recorder { inner })
    }
}

streaming_recorder!(Hdf5Recorder);

impl Drop for RustBackend {
    /// A writer still open here belongs to a run that stopped on an error:
    /// closed quietly (the error was reported; the library would print its
    /// own message on drop).
    fn drop(&mut self) {
        if let Some(w) = self.writer.take() {
            let _ = w.close();
        }
    }
}

/// One streamed dataset as the rust-hdf5 backend needs it.
struct RustColumn {
    /// Shape and chunk geometry.
    geom: Column,
    elem: usize,
    /// The current band is on disk unfiltered (a flush wrote it partial).
    band_raw: bool,
}

struct RustBackend {
    path: PathBuf,
    /// `None` once closed.
    writer: Option<SwmrFileWriter>,
    /// A second handle on the file, for its superblock ([`RustBackend::settle_superblock`]).
    superblock: File,
    datasets: Vec<usize>,
    columns: Vec<RustColumn>,
    /// Filter mask that stores a chunk unfiltered, for compressed datasets.
    raw_mask: Option<u32>,
    scratch: Vec<u8>,
}

/// Writes a [`FixedDataset`] (contiguous, whole) into the file at `path`.
fn write_fixed(w: &mut SwmrFileWriter, path: &Path, f: &FixedDataset) -> Result<(), OutputError> {
    let full = f.path.as_str();
    let err = |e: rust_hdf5::Hdf5Error| h5_error(path, format!("/{full}: {e}"));
    let dims: Vec<u64> = f.shape.iter().map(|&d| d as u64).collect();
    match &f.data {
        // A zero-length contiguous dataset, as h5py writes one.
        FixedData::F64(v) if v.is_empty() => w
            .create_dataset_typed(full, f64::hdf5_type(), &dims)
            .map(drop),
        FixedData::I64(v) if v.is_empty() => w
            .create_dataset_typed(full, i64::hdf5_type(), &dims)
            .map(drop),
        FixedData::Str(names) if names.is_empty() => {
            let vlen = DatatypeMessage::VarLenString {
                padding: 0,
                charset: 1,
            };
            w.create_dataset_typed(full, vlen, &dims).map(drop)
        }
        FixedData::F64(v) => w.write_dataset(full, &dims, v).map(drop),
        FixedData::I64(v) => w.write_dataset(full, &dims, v).map(drop),
        FixedData::Str(names) => {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            w.write_string_dataset(full, &refs).map(drop)
        }
    }
    .map_err(err)
}

/// One column of a table file ([`write_table`]).
#[derive(Debug, Clone, PartialEq)]
pub enum TableColumn {
    /// Variable-length UTF-8 strings.
    Str(Vec<String>),
    /// f64 values (NaN where missing).
    F64(Vec<f64>),
}

/// Writes a table as a new HDF5 file at `path` (truncating it): one
/// one-dimensional dataset per column, named by [`path_component`] of the
/// column name, and the root attribute `columns` with the column names in
/// order, one per line (`flexmb batch`'s `summary.h5`).
pub fn write_table(path: &Path, columns: &[(String, TableColumn)]) -> Result<(), OutputError> {
    let mut w = SwmrFileWriter::create(path).map_err(|e| h5_error(path, e))?;
    for (name, column) in columns {
        let (len, data) = match column {
            TableColumn::Str(v) => (v.len(), FixedData::Str(v.clone())),
            TableColumn::F64(v) => (v.len(), FixedData::F64(v.clone())),
        };
        let f = FixedDataset {
            path: path_component(name),
            shape: vec![len],
            data,
        };
        write_fixed(&mut w, path, &f)?;
    }
    let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
    w.set_group_attr_string("/", "columns", &names.join("\n"))
        .map_err(|e| h5_error(path, format!("attribute columns: {e}")))?;
    w.close().map_err(|e| h5_error(path, format!("close: {e}")))
}

fn hdf5_type(dtype: Dtype) -> DatatypeMessage {
    match dtype {
        Dtype::F64 => f64::hdf5_type(),
        Dtype::U64 => u64::hdf5_type(),
        Dtype::U32 => u32::hdf5_type(),
    }
}

impl RustBackend {
    fn writer(&mut self) -> Result<&mut SwmrFileWriter, OutputError> {
        match self.writer.as_mut() {
            Some(w) => Ok(w),
            None => Err(h5_error(&self.path, "file already closed")),
        }
    }

    /// Creates (truncates) the file at `path`, with a second handle on it
    /// for its superblock.
    fn open(path: &Path) -> Result<Self, OutputError> {
        let writer = SwmrFileWriter::create(path).map_err(|e| h5_error(path, e))?;
        let superblock = File::options()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| OutputError::Io {
                path: path.display().to_string(),
                source,
            })?;
        Ok(RustBackend {
            path: path.to_path_buf(),
            writer: Some(writer),
            superblock,
            datasets: Vec::new(),
            columns: Vec::new(),
            raw_mask: None,
            scratch: Vec::new(),
        })
    }

    /// Puts the superblock rust-hdf5 just wrote (at `start_swmr` and at the
    /// end of each flush, with the SWMR flags set) in the state every
    /// libhdf5 reader must find: consistency flags clear ("closed cleanly",
    /// what `h5clear -s` does, so that h5py and h5dump open the file without
    /// SWMR), and the file at least as long as the end of allocation
    /// (libhdf5 calls a shorter file truncated). Durably.
    fn settle_superblock(&mut self) -> Result<(), OutputError> {
        let io = |source| OutputError::Io {
            path: self.path.display().to_string(),
            source,
        };
        let file = &mut self.superblock;
        let mut buf = [0u8; 48];
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.read_exact(&mut buf).map_err(io)?;
        let Ok(mut sb) = SuperblockV2V3::decode(&buf) else {
            return Err(h5_error(&self.path, "superblock not readable after flush"));
        };
        if file.metadata().map_err(io)?.len() < sb.end_of_file_address {
            file.set_len(sb.end_of_file_address).map_err(io)?;
        }
        if sb.file_consistency_flags != 0 {
            sb.file_consistency_flags = 0;
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            file.write_all(&sb.encode()).map_err(io)?;
        }
        file.sync_data().map_err(io)
    }

    /// rust-hdf5's SWMR flush (chunk index, dataset headers, superblock with
    /// the end of allocation, each synced), then the superblock settled.
    fn swmr_flush(&mut self) -> Result<(), OutputError> {
        self.settled_after("flush", SwmrFileWriter::flush)
    }

    /// The writer's call `write` (named `what` in its error), which ends by
    /// writing the superblock, then that superblock settled
    /// ([`Self::settle_superblock`]).
    fn settled_after(
        &mut self,
        what: &str,
        write: impl FnOnce(&mut SwmrFileWriter) -> rust_hdf5::Result<()>,
    ) -> Result<(), OutputError> {
        let path = self.path.clone();
        write(self.writer()?).map_err(|e| h5_error(&path, format!("{what}: {e}")))?;
        self.settle_superblock()
    }

    /// [`Backend::flush`], calling `around` with the file's path before and
    /// after each SWMR flush (`flush_window_tests` rebuilds the file of a
    /// writer killed inside each).
    fn flush_observed(
        &mut self,
        rows: u64,
        around: &mut dyn FnMut(&Path),
    ) -> Result<(), OutputError> {
        for extents in [None, Some(rows)] {
            if let Some(rows) = extents {
                self.set_extents(rows)?;
            }
            around(&self.path);
            self.swmr_flush()?;
            around(&self.path);
        }
        Ok(())
    }

    fn set_extents(&mut self, rows: u64) -> Result<(), OutputError> {
        let path = self.path.clone();
        let Some(w) = self.writer.as_mut() else {
            return Err(h5_error(&path, "file already closed"));
        };
        for (c, &ds) in self.columns.iter().zip(&self.datasets) {
            w.set_extent(ds, &c.geom.dims(rows))
                .map_err(|e| h5_error(&path, format!("set extent: {e}")))?;
        }
        Ok(())
    }
}

impl Backend for RustBackend {
    fn create_group(&mut self, g: &str) -> Result<(), OutputError> {
        let path = self.path.clone();
        self.writer()?
            .create_group("/", g)
            .map(drop)
            .map_err(|e| h5_error(&path, format!("{g}: {e}")))
    }

    fn create_column(&mut self, c: &Column, compression: u8) -> Result<(), OutputError> {
        let pipeline = (compression > 0)
            .then(|| FilterPipeline::shuffle_deflate(c.dtype().size() as u32, compression.into()));
        if let Some(p) = &pipeline {
            // Every filter of the pipeline skipped: the chunk is stored raw.
            self.raw_mask = Some((1u32 << p.filters.len()) - 1);
        }
        let path = self.path.clone();
        // A name with a group component is created inside that group.
        let ds = self
            .writer()?
            .create_grid_dataset_with_max(
                &c.path,
                hdf5_type(c.dtype()),
                &c.dims(0),
                &c.max_dims(),
                &c.chunk(),
                pipeline,
            )
            .map_err(|e| h5_error(&path, format!("{}: {e}", c.path)))?;
        self.datasets.push(ds);
        self.columns.push(RustColumn {
            geom: c.clone(),
            elem: c.dtype().size(),
            band_raw: false,
        });
        Ok(())
    }

    fn set_attr(&mut self, name: &str, value: &AttrValue) -> Result<(), OutputError> {
        let path = self.path.clone();
        let w = self.writer()?;
        match value {
            AttrValue::F64(x) => w.set_group_attr_numeric("/", name, x),
            AttrValue::I64(x) => w.set_group_attr_numeric("/", name, x),
            AttrValue::Str(s) => w.set_group_attr_string("/", name, s),
        }
        .map_err(|e| h5_error(&path, format!("attribute {name}: {e}")))
    }

    fn write_fixed(&mut self, f: &FixedDataset) -> Result<(), OutputError> {
        let path = self.path.clone();
        write_fixed(self.writer()?, &path, f)
    }

    fn start(&mut self) -> Result<(), OutputError> {
        self.settled_after("start SWMR", SwmrFileWriter::start_swmr)
    }

    fn write_band(
        &mut self,
        col: usize,
        first_row: u64,
        data: &ColumnBuf,
        last: bool,
    ) -> Result<(), OutputError> {
        let c = &mut self.columns[col];
        let n = c.geom.row_len();
        if n == 0 {
            return Ok(());
        }
        let ds = self.datasets[col];
        let nrows = data.len() / n;
        let band = first_row / c.geom.chunk_rows as u64;
        // A compressed dataset's band that a flush wrote partial is stored
        // unfiltered, and stays so when it completes: its chunks keep their
        // size and address, so the index a reader got at that flush stays
        // valid (a moved chunk could lie past the end of file that flush
        // recorded) and no file space is abandoned.
        let raw_mask = self.raw_mask.filter(|_| !last || c.band_raw);
        c.band_raw = raw_mask.is_some() && !last;
        let Some(w) = self.writer.as_mut() else {
            return Err(h5_error(&self.path, "file already closed"));
        };
        let (rows, cols, elem) = (c.geom.chunk_rows, c.geom.chunk_cols, c.elem);
        for (tile, c0) in (0..n).step_by(cols).enumerate() {
            let c1 = (c0 + cols).min(n);
            self.scratch.clear();
            self.scratch.resize(rows * cols * elem, 0);
            for r in 0..nrows {
                let out = &mut self.scratch[r * cols * elem..];
                data.write_le(r * n + c0..r * n + c1, out);
            }
            let coords = c.geom.chunk_coords(band, tile);
            match raw_mask {
                Some(mask) => w.write_chunk_raw_at(ds, &coords, &self.scratch, mask),
                None => w.write_chunk_at(ds, &coords, &self.scratch),
            }
            .map_err(|e| {
                h5_error(
                    &self.path,
                    format!("/{} rows from {first_row}: {e}", c.geom.path),
                )
            })?;
        }
        Ok(())
    }

    /// Two SWMR flushes, so that no moment's file points a reader past the
    /// end of allocation its superblock names. A flush writes the chunk
    /// index, then the dataset headers with their extents, and only then
    /// the superblock with the end of allocation: in a single flush that
    /// grows the extents, the headers name rows whose chunks (the bands
    /// written since the last flush) lie past the end the superblock on
    /// disk still names until its rewrite, and libhdf5 refuses a file
    /// killed in between ("addr overflow"; h5py failed so on a CI run). The
    /// first flush keeps the extents, under which no index entry a reader
    /// can reach has changed (a band a flush wrote partial keeps its place,
    /// see `write_band`), and moves the end of allocation past every block;
    /// the second publishes the extents and allocates nothing.
    fn flush(&mut self, rows: u64) -> Result<(), OutputError> {
        self.flush_observed(rows, &mut |_| {})
    }

    /// The last bands first reach the end of allocation as in
    /// [`flush`](Backend::flush): closing writes the headers with the final
    /// extents before the superblock.
    fn set_rows(&mut self, rows: u64) -> Result<(), OutputError> {
        self.swmr_flush()?;
        self.set_extents(rows)
    }

    fn close(&mut self) -> Result<(), OutputError> {
        let Some(w) = self.writer.take() else {
            return Err(h5_error(&self.path, "file already closed"));
        };
        w.close()
            .map_err(|e| h5_error(&self.path, format!("close: {e}")))
    }
}

#[cfg(test)]
mod flush_window_tests;
