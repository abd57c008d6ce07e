//! The HCMPI driver (§IV-C): hierarchical tiling with distributed
//! data-driven futures between outer tiles on different ranks and local
//! DDFs between inner tiles (and between outer tiles on the same rank).
//!
//! The matrix is cut into outer tiles, distributed over the ranks by a
//! [`Distribution`]. Each outer tile `(i, j)` passes on two edges:
//!
//! * its **bottom row** (`H`, `F`), awaited by tile `(i + 1, j)`;
//! * its **right column** (`H`, `E`), awaited by tile `(i, j + 1)`, led by
//!   the `H` just above the column's first cell: the corner that tile
//!   needs above-left of it. Tile `(i, j)` has that value as the last one
//!   of its own top row, so no tile waits for its diagonal neighbour (a
//!   corner of its own cost a message and a DDDF per tile, a third of all
//!   of them).
//!
//! An edge whose reader is on another rank is a DDDF homed on its
//! writer's rank, fetched by the DDDF protocol, once. An edge whose reader
//! is on the same rank moves to it through a local DDF (`Link`).
//!
//! A rank spawns one data-driven task per outer tile it owns, awaiting the
//! (up to) two edges of its neighbours, and, where the distribution asks
//! for it, the start of the tiles it should follow on this rank
//! ([`Distribution::run_after`]). When it runs, the task splits its
//! tile into inner tiles and spawns one data-driven task per inner tile,
//! awaiting the local DDFs of the inner tile above and to the left. The
//! inner tile that completes an outer edge (the last of the last inner row
//! or column) puts it, in that tile's task. An outer edge stays in the pieces
//! its inner tiles made, which are the pieces the inner tiles of its reader
//! take: on the same rank they move as they are, with no copy; to another
//! rank they are packed into one message, of 16-bit words where the
//! edge's values cannot pass 65535, and unpacked into pieces again (see
//! [`crate::sw::edges`]). No task ever blocks: the wavefront advances
//! through point-to-point dependences only, with no barrier between
//! diagonals, and communication overlaps computation.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use hc_mpi::Hcmpi;
use hc_runtime::{Awaitable, Ddf, Scope};
use hcmpi_dddf::{Dddf, DddfError, DddfSpace};

use crate::progress::Progress;
use crate::sw::alignment::Checkpoints;
use crate::sw::edges::{col_parts, row_parts, unpack_cols, unpack_rows, Packed, Width};
use crate::sw::grid::{Distribution, Grid};
use crate::sw::kept::{kept_rows, Keeper};
use crate::sw::tile::{tile_in_place, EdgeCol, EdgeRow, Origin};
use crate::sw::{Best, Scoring};

/// Tile sizes and distribution of the HCMPI driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiling {
    /// Outer tile (rows, columns): the unit of distribution.
    pub outer: (usize, usize),
    /// Inner tile (rows, columns): the unit of computation (one task).
    pub inner: (usize, usize),
    /// How outer tiles are assigned to ranks.
    pub distribution: Distribution,
    /// Whether the bands get lower towards the matrix's top and bottom
    /// ([`Grid::tapered`]): the bands of outer tiles, down which the ranks
    /// form a pipeline, or where the outer tiles span every row (one
    /// rank's whole matrix), the inner bands of each, whose wavefront its
    /// workers share. If not, every band is `outer.0` (`inner.0`) high but
    /// the last.
    pub taper: bool,
}

/// Which DDDF of an outer tile a guid names.
const BOTTOM: u64 = 0;
const RIGHT: u64 = 1;
const KINDS: u64 = 2;

fn guid(grid: &Grid, i: usize, j: usize, kind: u64) -> u64 {
    (i * grid.tile_cols_count() + j) as u64 * KINDS + kind
}

fn tile_of(grid: &Grid, guid: u64) -> (usize, usize, u64) {
    let tile = (guid / KINDS) as usize;
    let cols = grid.tile_cols_count();
    (tile / cols, tile % cols, guid % KINDS)
}

/// The tile that reads the edge `guid` names: the one below a bottom row,
/// right of a right column; `None` past the matrix.
fn reader_of(grid: &Grid, guid: u64) -> Option<(usize, usize)> {
    let (i, j, kind) = tile_of(grid, guid);
    let (i, j) = match kind {
        BOTTOM => (i + 1, j),
        RIGHT => (i, j + 1),
        _ => return None,
    };
    (i < grid.tile_rows_count() && j < grid.tile_cols_count()).then_some((i, j))
}

/// How the edges of outer tile `(i, j)` travel: every cell of them lies
/// in the tile's rows and columns or above them.
fn width_of(grid: &Grid, max_gain: i32, i: usize, j: usize) -> Width {
    Width::of_edge(max_gain, grid.rows(i).end, grid.cols(j).end)
}

/// Bytes of a DDDF's value: two values per cell of an edge, and the
/// corner before a column, in the words of the edge's [`Width`].
fn size_of(grid: &Grid, max_gain: i32, guid: u64) -> usize {
    let (i, j, kind) = tile_of(grid, guid);
    let values = match kind {
        BOTTOM => 2 * grid.cols(j).len(),
        RIGHT => 1 + 2 * grid.rows(i).len(),
        _ => unreachable!("guid {guid} names no edge"),
    };
    width_of(grid, max_gain, i, j).words(values) * std::mem::size_of::<u16>()
}

/// Best local alignment of `a` against `b` computed by all ranks of `hc`
/// together; every rank returns the same result, equal to
/// [`crate::sw::reference::align`]. Collective: every rank passes the
/// same sequences, scoring and `tiling`.
///
/// `progress` gets this rank's share of the cells as its length and
/// advances by each inner tile computed here ([`Progress::hidden`] for none).
///
/// # Errors
/// A DDDF or MPI failure.
///
/// # Panics
/// If a tile dimension is 0.
pub fn align(
    hc: &Hcmpi,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    tiling: &Tiling,
    progress: &Progress,
) -> Result<Best, DddfError> {
    in_one_task(hc, || {
        align_keeping(hc, a, b, scoring, tiling, progress, false)
    })
    .map(|(best, _)| best)
}

/// [`align`] that also keeps rows of `H` and `F` for
/// [`crate::sw::alignment::trace`], so that rank 0 traces the alignment
/// without computing the matrix again. The rows are some of those that
/// end an inner tile row (`sw::kept`), within
/// [`crate::sw::alignment::CHECKPOINT_BYTES`]: rank 0 copies the bottom
/// edges of its inner tiles on those rows into whole rows, and the other
/// ranks send it theirs after the pass. The [`Checkpoints`] are empty on
/// the other ranks.
/// Collective.
///
/// # Errors
/// As [`align`].
///
/// # Panics
/// As [`align`].
pub fn align_with_checkpoints(
    hc: &Hcmpi,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    tiling: &Tiling,
    progress: &Progress,
) -> Result<(Best, Checkpoints), DddfError> {
    in_one_task(hc, || {
        align_keeping(hc, a, b, scoring, tiling, progress, true)
    })
}

/// Runs `alignment` as one task of `hc`'s workers, so that its waits for
/// MPI (the space's communicator, the close's allreduces, the gathers)
/// poll the engine on a worker: on the calling thread each would park it
/// and end with a wake-up, 10–20 µs apiece on a virtual machine. Random
/// 5000² proteins at 2 ranks of 1 worker align 3% faster (paired median
/// of 41 alternating runs: 0.971).
fn in_one_task<R: Send>(hc: &Hcmpi, alignment: impl FnOnce() -> R + Send) -> R {
    hc.finish(|_| alignment())
}

fn align_keeping(
    hc: &Hcmpi,
    a: &[u8],
    b: &[u8],
    scoring: &Scoring,
    tiling: &Tiling,
    progress: &Progress,
    keep: bool,
) -> Result<(Best, Checkpoints), DddfError> {
    let (n, m) = (a.len(), b.len());
    // Outer tiles that span every row taper their inner bands instead.
    let one_band = tiling.outer.0 >= n;
    let taper_inner = tiling.taper && one_band;
    let grid = Grid::cut(
        n,
        m,
        tiling.outer.0,
        tiling.outer.1,
        tiling.taper && !one_band,
    );
    let ranks = hc.size() as usize;
    let rank = hc.rank() as usize;
    let distribution = tiling.distribution;
    let (homes, sizes, readers) = (grid.clone(), grid.clone(), grid.clone());
    let max_gain = scoring.max_gain();
    // Each edge has one reader, known to its writer: the writer's rank
    // pushes it there as it is put, and the reader never asks. One rank
    // owns every tile, and its edges all move through local links: it
    // makes no space, whose communicator (42-47 µs to duplicate at one
    // rank), listener and closing waves it would pay for nothing.
    let space = (ranks > 1)
        .then(|| {
            DddfSpace::<Vec<u16>>::with_reader(
                hc,
                move |g| {
                    let (i, j, _) = tile_of(&homes, g);
                    distribution.owner(&homes, i, j, ranks) as i32
                },
                move |g| size_of(&sizes, max_gain, g),
                move |g| {
                    let (i, j) = reader_of(&readers, g)?;
                    Some(distribution.owner(&readers, i, j, ranks) as i32)
                },
            )
        })
        .transpose()?;
    let mine = |i, j| distribution.owner(&grid, i, j, ranks) == rank;
    let mut links = Links {
        space: space.as_ref(),
        grid: &grid,
        max_gain,
        mine: &mine,
        bottoms: HashMap::new(),
        rights: HashMap::new(),
    };
    let tiles = grid
        .wavefront()
        .filter(|&(i, j)| mine(i, j))
        .map(|(i, j)| OuterTile::new(&mut links, i, j))
        .collect::<Result<Vec<_>, _>>()?;
    progress.set_length(tiles.iter().map(|t| (t.rows * t.cols) as u64).sum());
    let context = Context {
        a,
        b,
        scoring,
        inner: tiling.inner,
        taper_inner,
        best: Mutex::new(Best::default()),
        progress,
        kept: keep.then(|| {
            Keeper::new(
                kept_rows(&grid, tiling.inner.0, taper_inner, ranks),
                b.len(),
                hc.rank(),
            )
        }),
    };
    let position: HashMap<(usize, usize), usize> = tiles
        .iter()
        .enumerate()
        .map(|(k, tile)| (tile.position, k))
        .collect();
    let wavefront = hc_runtime::trace::span("sw", "wavefront");
    hc.finish(|s| {
        for tile in &tiles {
            let mut inputs = tile.inputs();
            let (i, j) = tile.position;
            for before in distribution.run_after(&grid, i, j, ranks) {
                inputs.push(&tiles[position[&before]].begun);
            }
            s.spawn_await(&inputs, |s| {
                or_end_job(|| tile.describe(), || tile.run(s, &context));
            });
        }
    });
    drop(wavefront);
    if let Some(space) = space {
        space.close()?;
    }
    let _gather = hc_runtime::trace::span("sw", "gather best");
    let checkpoints = match context.kept {
        Some(kept) => kept.gather(hc)?,
        None => Checkpoints::none(),
    };
    let mine = context
        .best
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    let all = hc.world().allgather(vec![
        i64::from(mine.score),
        mine.row as i64,
        mine.col as i64,
    ])?;
    let best = all
        .chunks_exact(3)
        .map(|c| Best {
            score: c[0] as i32,
            row: c[1] as usize,
            col: c[2] as usize,
        })
        .fold(Best::default(), Best::merge);
    Ok((best, checkpoints))
}

/// What every task of one rank shares.
struct Context<'a> {
    a: &'a [u8],
    b: &'a [u8],
    scoring: &'a Scoring,
    inner: (usize, usize),
    /// Whether the inner bands taper ([`Tiling::taper`]).
    taper_inner: bool,
    best: Mutex<Best>,
    progress: &'a Progress,
    /// What this rank keeps of the rows kept for the traceback, if any.
    kept: Option<Keeper>,
}

impl Context<'_> {
    fn merge(&self, best: Best) {
        let mut mine = self.best.lock().unwrap_or_else(PoisonError::into_inner);
        *mine = mine.merge(best);
    }
}

/// Ends the whole job on a failure inside a tile's task (an MPI or DDDF
/// error, a panic): the tiles that depend on this one could otherwise
/// never run, and every rank would wait forever.
fn fatal(what: &str, error: impl std::fmt::Display) -> ! {
    hc_mpi::abort_job(1, &format!("smith-waterman: {what}: {error}"))
}

/// Runs the body of a tile's task, ending the whole job if it panics
/// ([`fatal`], naming the tile `tile` describes). Caught by its finish
/// instead, the panic would wait there for the tiles after this one, and
/// those for the edges this one never put: every rank would hang.
fn or_end_job<R>(tile: impl FnOnce() -> String, body: impl FnOnce() -> R) -> R {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(done) => done,
        Err(payload) => fatal(
            &format!("{} failed", tile()),
            hc_runtime::panic_message(&*payload),
        ),
    }
}

/// How an outer tile's edge reaches the tile that reads it.
enum Link<T> {
    /// Both tiles are on this rank: the edge itself moves, as between
    /// inner tiles, in the pieces its writer's inner tiles made, which are
    /// the pieces its reader's inner tiles take. A DDDF would keep a copy
    /// until the space closes, a fresh piece of heap for every tile.
    Local(Ddf<Handoff<T>>),
    /// The other tile is on another rank: a DDDF homed on the writer's,
    /// the edge packed in words of `width` (see [`crate::sw::edges`]).
    Remote { dddf: Dddf<Vec<u16>>, width: Width },
}

impl<T: Send> Link<T> {
    fn awaitable(&self) -> &dyn Awaitable {
        match self {
            Link::Local(ddf) => ddf,
            Link::Remote { dddf, .. } => dddf,
        }
    }

    /// The edge, once awaited: moved out of a local link, unpacked from a
    /// remote one's words.
    fn take(&self, unpack: impl FnOnce(Packed<'_>) -> T) -> T {
        match self {
            Link::Local(ddf) => ddf.get().expect("awaited").take(),
            Link::Remote { dddf, width } => {
                let words = dddf
                    .get()
                    .unwrap_or_else(|e| fatal("reading a neighbour's edge", e));
                unpack(Packed::words(*width, words))
            }
        }
    }

    /// Puts the edge: made by `edge` for a reader on this rank, by
    /// `packed` in the form it travels in for a reader on another: the
    /// link's words of `edge`.
    fn put(&self, edge: impl FnOnce() -> T, packed: impl FnOnce(T, Width) -> Vec<u16>) {
        match self {
            Link::Local(ddf) => {
                let fresh = ddf.put(Handoff::new(edge())).is_ok();
                assert!(fresh, "an outer edge is put once");
            }
            Link::Remote { dddf, width } => dddf
                .put(packed(edge(), *width))
                .unwrap_or_else(|e| fatal("publishing a tile edge", e)),
        }
    }
}

/// Builds the links of this rank's outer tiles: one local DDF shared by
/// the writer and the reader where both are here, a DDDF handle otherwise.
struct Links<'a> {
    /// The edges that cross ranks; none on one rank.
    space: Option<&'a DddfSpace<Vec<u16>>>,
    grid: &'a Grid,
    /// The scoring's [`Scoring::max_gain`], which bounds the edges' values.
    max_gain: i32,
    /// Whether this rank owns tile `(i, j)`.
    mine: &'a dyn Fn(usize, usize) -> bool,
    /// Local links asked for by one of their two tiles so far, by the tile
    /// that writes them.
    bottoms: HashMap<(usize, usize), Ddf<Handoff<Vec<EdgeRow>>>>,
    rights: HashMap<(usize, usize), Ddf<Handoff<Vec<EdgeCol>>>>,
}

impl Links<'_> {
    /// The link of the bottom row of tile `(i, j)`, read by `(i + 1, j)`.
    fn bottom(&mut self, i: usize, j: usize) -> Result<Link<Vec<EdgeRow>>, DddfError> {
        if (self.mine)(i, j) && (self.mine)(i + 1, j) {
            Ok(local_link(&mut self.bottoms, (i, j)))
        } else {
            self.remote((i, j), BOTTOM)
        }
    }

    /// The link of the right column of tile `(i, j)`, read by `(i, j + 1)`.
    fn right(&mut self, i: usize, j: usize) -> Result<Link<Vec<EdgeCol>>, DddfError> {
        if (self.mine)(i, j) && (self.mine)(i, j + 1) {
            Ok(local_link(&mut self.rights, (i, j)))
        } else {
            self.remote((i, j), RIGHT)
        }
    }

    /// The remote link of the edge `kind` of tile `(i, j)`: its DDDF, and
    /// the width of the words it travels in.
    fn remote<T>(&self, (i, j): (usize, usize), kind: u64) -> Result<Link<T>, DddfError> {
        let space = self
            .space
            .expect("a tile on another rank means a job of several ranks, which has a space");
        Ok(Link::Remote {
            dddf: space.handle(guid(self.grid, i, j, kind))?,
            width: width_of(self.grid, self.max_gain, i, j),
        })
    }
}

/// The local link of the tile `writer`: made when the first of its two
/// tiles asks and kept in `ddfs` for the second, which takes it out.
fn local_link<T: Send>(
    ddfs: &mut HashMap<(usize, usize), Ddf<Handoff<T>>>,
    writer: (usize, usize),
) -> Link<T> {
    let ddf = match ddfs.entry(writer) {
        Entry::Occupied(second) => second.remove(),
        Entry::Vacant(first) => first.insert(Ddf::new()).clone(),
    };
    Link::Local(ddf)
}

/// An outer tile owned by this rank and the links of its edges, each
/// edge in the pieces of its inner tiles: the bottom rows of the last inner
/// row, left to right, and the right columns of the last inner column, top
/// to bottom. All outer tiles of a tile row (column) have the same rows
/// (columns), so they cut them alike.
struct OuterTile {
    /// Its (tile row, tile column).
    position: (usize, usize),
    /// Put when it starts (see [`Distribution::run_after`]).
    begun: Ddf<()>,
    origin: Origin,
    rows: usize,
    cols: usize,
    top: Option<Link<Vec<EdgeRow>>>,
    left: Option<Link<Vec<EdgeCol>>>,
    out_bottom: Option<Link<Vec<EdgeRow>>>,
    out_right: Option<Link<Vec<EdgeCol>>>,
}

impl OuterTile {
    fn new(links: &mut Links<'_>, i: usize, j: usize) -> Result<Self, DddfError> {
        let grid = links.grid;
        let (last_i, last_j) = (
            i + 1 == grid.tile_rows_count(),
            j + 1 == grid.tile_cols_count(),
        );
        Ok(OuterTile {
            position: (i, j),
            begun: Ddf::new(),
            origin: Origin {
                row: grid.rows(i).start,
                col: grid.cols(j).start,
            },
            rows: grid.rows(i).len(),
            cols: grid.cols(j).len(),
            top: (i > 0).then(|| links.bottom(i - 1, j)).transpose()?,
            left: (j > 0).then(|| links.right(i, j - 1)).transpose()?,
            out_bottom: (!last_i).then(|| links.bottom(i, j)).transpose()?,
            out_right: (!last_j).then(|| links.right(i, j)).transpose()?,
        })
    }

    /// Names this tile by its first cell, for messages.
    fn describe(&self) -> String {
        let Origin { row, col } = self.origin;
        format!("the outer tile at row {row}, column {col}")
    }

    fn inputs(&self) -> Vec<&dyn Awaitable> {
        let top = self.top.as_ref().map(Link::awaitable);
        let left = self.left.as_ref().map(Link::awaitable);
        top.into_iter().chain(left).collect()
    }

    /// Runs once the inputs are available: spawns the inner tiles, which
    /// put this tile's edges as they complete them.
    fn run<'scope>(&'scope self, s: &'scope Scope<'scope, '_>, context: &'scope Context<'scope>) {
        let fresh = self.begun.put(()).is_ok();
        assert!(fresh, "outer tile {:?} run twice", self.position);
        let (rows, cols) = context.inner;
        let grid = Grid::cut(self.rows, self.cols, rows, cols, context.taper_inner);
        let col_cuts = (0..grid.tile_cols_count()).map(|q| grid.cols(q));
        let row_cuts = (0..grid.tile_rows_count()).map(|p| grid.rows(p));
        // On the matrix's top and left borders each inner tile makes its
        // own piece (`Edges::Border`) when it runs: made here, the pieces
        // of a whole row or column would fault in their fresh pages before
        // the first inner tile could start.
        let top = Edges::taken(&self.top, |flat| unpack_rows(flat, col_cuts));
        let left = Edges::taken(&self.left, |flat| unpack_cols(flat, row_cuts));
        let inner = Arc::new(InnerTiles::new(self.origin, grid, top, left));
        for (p, q) in inner.grid.wavefront() {
            let tiles = Arc::clone(&inner);
            let deps = inner.inputs(p, q);
            s.spawn_await(&deps, move |_| {
                or_end_job(
                    || tiles.describe(p, q),
                    || {
                        tiles.compute(p, q, context);
                        self.publish_completed(&tiles, tiles.complete(p, q));
                    },
                );
            });
        }
    }

    /// Puts the edges of this tile that the inner tile just computed
    /// completed: the inner tiles' pieces themselves for a reader on this
    /// rank, packed into one message for a reader on another, that one
    /// first. The right column's corner is the first piece's: the last `H`
    /// of this tile's top row.
    ///
    /// This runs in the task of the inner tile that completes an edge, not
    /// in a task of its own: the worker runs the task released last first,
    /// so a tile released meanwhile by a neighbour's edge (a message
    /// polled between the two tasks) would run first, and another rank
    /// waiting for this edge would wait for that tile too. In a trace of 2
    /// ranks on related DNA 20000², that delayed a band by 170 µs.
    fn publish_completed(&self, inner: &InnerTiles, completed: Completed) {
        let bottom = || {
            if let Some(link) = self.out_bottom.as_ref().filter(|_| completed.bottom) {
                link.put(
                    || inner.take_last_row(),
                    |row, width| width.encode_parts(row_parts(&row)),
                );
            }
        };
        let right = || {
            if let Some(link) = self.out_right.as_ref().filter(|_| completed.right) {
                link.put(
                    || inner.take_last_column(),
                    |column, width| width.encode_parts(col_parts(&column)),
                );
            }
        };
        if matches!(self.out_bottom, Some(Link::Remote { .. })) {
            bottom();
            right();
        } else {
            right();
            bottom();
        }
    }
}

/// Which of an outer tile's edges an inner tile completed
/// ([`InnerTiles::complete`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Completed {
    /// The bottom row: the inner tile was the last of the last inner row.
    bottom: bool,
    /// The right column: the last of the last inner column.
    right: bool,
}

/// An edge put once and taken once, by the one tile that reads it: so a
/// column's row buffer moves down the whole column, and a row's column
/// buffer along the row, instead of being copied at every tile and kept
/// until the outer tile ends. Kept copies grew the heap by an edge a tile
/// (4.5 MB for related DNA 20000² on one rank), and each new page costs a
/// fault, several microseconds on a virtual machine.
struct Handoff<T>(Mutex<Option<T>>);

impl<T> Handoff<T> {
    fn new(value: T) -> Self {
        Handoff(Mutex::new(Some(value)))
    }

    /// Applies `f` to the edge, not yet taken.
    fn peek<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .expect("an edge not taken yet"))
    }

    fn take(&self) -> T {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .expect("an edge is taken once")
    }
}

/// An outer tile's input edge: a piece for each inner tile of its first
/// row (column), taken by it, or the matrix's border, which each of those
/// inner tiles makes for itself.
enum Edges<T> {
    Pieces(Vec<Handoff<T>>),
    /// `H` 0 and no gap; left of column 0, the corners 0 too.
    Border,
}

impl<T: Send> Edges<T> {
    /// The edge `link` brings, in the pieces `unpack` cuts a remote one
    /// into; the border where there is no link.
    fn taken(link: &Option<Link<Vec<T>>>, unpack: impl FnOnce(Packed<'_>) -> Vec<T>) -> Self {
        match link {
            Some(link) => Edges::Pieces(link.take(unpack).into_iter().map(Handoff::new).collect()),
            None => Edges::Border,
        }
    }
}

/// The inner tiles of one outer tile, linked by local DDFs.
struct InnerTiles {
    grid: Grid,
    origin: Origin,
    /// The outer tile's input edges.
    top: Edges<EdgeRow>,
    left: Edges<EdgeCol>,
    /// Per inner tile, row-major: its bottom row and right column (with the
    /// corner the tile to its right needs).
    bottoms: Vec<Ddf<Handoff<EdgeRow>>>,
    rights: Vec<Ddf<Handoff<EdgeCol>>>,
    /// Inner tiles of the last row (column) not yet computed
    /// ([`complete`](Self::complete)).
    unfinished_bottom: AtomicUsize,
    unfinished_right: AtomicUsize,
}

impl InnerTiles {
    /// The inner tiles `grid` of the outer tile at `origin`, its input
    /// edges cut as `grid` cuts its columns (`top`) and rows (`left`).
    fn new(origin: Origin, grid: Grid, top: Edges<EdgeRow>, left: Edges<EdgeCol>) -> Self {
        if let Edges::Pieces(top) = &top {
            let widths = (0..grid.tile_cols_count()).map(|q| grid.cols(q).len());
            assert!(
                top.iter().map(|piece| piece.peek(EdgeRow::len)).eq(widths),
                "an outer top edge cut unlike its reader's inner columns"
            );
        }
        if let Edges::Pieces(left) = &left {
            let heights = (0..grid.tile_rows_count()).map(|p| grid.rows(p).len());
            assert!(
                left.iter()
                    .map(|piece| piece.peek(EdgeCol::len))
                    .eq(heights),
                "an outer left edge cut unlike its reader's inner rows"
            );
        }
        let count = grid.tile_rows_count() * grid.tile_cols_count();
        InnerTiles {
            origin,
            top,
            left,
            bottoms: (0..count).map(|_| Ddf::new()).collect(),
            rights: (0..count).map(|_| Ddf::new()).collect(),
            unfinished_bottom: AtomicUsize::new(grid.tile_cols_count()),
            unfinished_right: AtomicUsize::new(grid.tile_rows_count()),
            grid,
        }
    }

    fn index(&self, p: usize, q: usize) -> usize {
        p * self.grid.tile_cols_count() + q
    }

    fn take_bottom(&self, p: usize, q: usize) -> EdgeRow {
        self.bottoms[self.index(p, q)]
            .get()
            .expect("awaited")
            .take()
    }

    fn take_right(&self, p: usize, q: usize) -> EdgeCol {
        self.rights[self.index(p, q)].get().expect("awaited").take()
    }

    fn inputs(&self, p: usize, q: usize) -> Vec<&dyn Awaitable> {
        let mut deps: Vec<&dyn Awaitable> = Vec::with_capacity(2);
        if p > 0 {
            deps.push(&self.bottoms[self.index(p - 1, q)]);
        }
        if q > 0 {
            deps.push(&self.rights[self.index(p, q - 1)]);
        }
        deps
    }

    /// Counts inner tile `(p, q)` as computed, once its pieces are put:
    /// which of the outer tile's edges it was the last piece of.
    ///
    /// Each count is taken down once by each tile of the last inner row
    /// (column), after it put its piece; the tile that takes it to 0 sees
    /// every piece (`AcqRel`: each decrement releases its tile's put and
    /// the last acquires them all, besides what each `Ddf` orders).
    fn complete(&self, p: usize, q: usize) -> Completed {
        let (pn, qn) = (self.grid.tile_rows_count(), self.grid.tile_cols_count());
        let last = |unfinished: &AtomicUsize, on_edge: bool| {
            on_edge && unfinished.fetch_sub(1, Ordering::AcqRel) == 1
        };
        Completed {
            bottom: last(&self.unfinished_bottom, p + 1 == pn),
            right: last(&self.unfinished_right, q + 1 == qn),
        }
    }

    /// Names inner tile `(p, q)` by its first cell, for messages.
    fn describe(&self, p: usize, q: usize) -> String {
        let (row, col) = (
            self.origin.row + self.grid.rows(p).start,
            self.origin.col + self.grid.cols(q).start,
        );
        format!("the tile at row {row}, column {col}")
    }

    fn compute(&self, p: usize, q: usize, context: &Context<'_>) {
        let mut span = hc_runtime::trace::span("sw", "inner tile");
        let (rows, cols) = (self.grid.rows(p), self.grid.cols(q));
        span.set_args(
            hc_runtime::trace::Args::new()
                .with("row", (self.origin.row + rows.start) as i64)
                .with("col", (self.origin.col + cols.start) as i64),
        );
        let mut top = match &self.top {
            _ if p > 0 => self.take_bottom(p - 1, q),
            Edges::Pieces(pieces) => pieces[q].take(),
            Edges::Border => EdgeRow::border(cols.len()),
        };
        let mut left = match &self.left {
            _ if q > 0 => self.take_right(p, q - 1),
            Edges::Pieces(pieces) => pieces[p].take(),
            Edges::Border => EdgeCol::border(rows.len()),
        };
        let origin = Origin {
            row: self.origin.row + rows.start,
            col: self.origin.col + cols.start,
        };
        let a = &context.a[origin.row..origin.row + rows.len()];
        let b = &context.b[origin.col..origin.col + cols.len()];
        let best = tile_in_place(a, b, context.scoring, origin, &mut top, &mut left);
        context.merge(best);
        if let Some(kept) = &context.kept {
            kept.keep(origin.row + rows.len(), origin.col, &top);
        }
        let index = self.index(p, q);
        let fresh = self.bottoms[index].put(Handoff::new(top)).is_ok()
            && self.rights[index].put(Handoff::new(left)).is_ok();
        assert!(fresh, "inner tile ({p}, {q}) computed twice");
        // After the puts: a redraw must not delay the tiles they release.
        context.progress.inc((a.len() * b.len()) as u64);
    }

    /// The bottoms of the last inner row, left to right (taken).
    fn take_last_row(&self) -> Vec<EdgeRow> {
        let (pn, qn) = (self.grid.tile_rows_count(), self.grid.tile_cols_count());
        (0..qn).map(|q| self.take_bottom(pn - 1, q)).collect()
    }

    /// The rights of the last inner column, top to bottom (taken).
    fn take_last_column(&self) -> Vec<EdgeCol> {
        let (pn, qn) = (self.grid.tile_rows_count(), self.grid.tile_cols_count());
        (0..pn).map(|p| self.take_right(p, qn - 1)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_link_joins_its_two_tiles_then_is_forgotten() {
        let mut ddfs = HashMap::new();
        let writer = local_link(&mut ddfs, (2, 3));
        assert_eq!(ddfs.len(), 1);
        let reader = local_link(&mut ddfs, (2, 3));
        assert!(ddfs.is_empty());
        writer.put(|| 7, |_, _| unreachable!("a local edge is not packed"));
        assert!(reader.awaitable().is_ready());
        assert_eq!(reader.take(|_| unreachable!("nor unpacked")), 7);
    }

    #[test]
    #[should_panic(expected = "an edge is taken once")]
    fn an_edge_is_taken_once() {
        let edge = Handoff::new(EdgeRow::border(3));
        assert_eq!(edge.take(), EdgeRow::border(3));
        edge.take();
    }

    #[test]
    fn each_edge_is_read_by_the_tile_after_it() {
        let grid = Grid::cut(100, 60, 30, 20, false);
        let (rows, cols) = (grid.tile_rows_count(), grid.tile_cols_count());
        assert_eq!((rows, cols), (4, 3));
        for i in 0..rows {
            for j in 0..cols {
                let below = (i + 1 < rows).then_some((i + 1, j));
                let right = (j + 1 < cols).then_some((i, j + 1));
                assert_eq!(reader_of(&grid, guid(&grid, i, j, BOTTOM)), below);
                assert_eq!(reader_of(&grid, guid(&grid, i, j, RIGHT)), right);
            }
        }
    }

    #[test]
    fn guids_name_each_edge_of_each_tile_once() {
        let grid = Grid::new(10, 7, 4, 3);
        let mut seen = std::collections::HashSet::new();
        for (i, j) in grid.wavefront() {
            for kind in [BOTTOM, RIGHT] {
                let g = guid(&grid, i, j, kind);
                assert!(seen.insert(g));
                assert_eq!(tile_of(&grid, g), (i, j, kind));
            }
        }
        // Tile (2, 2) is 2 rows (8..10) by 1 column (6..7): 2 values in
        // its bottom edge, 5 in its right one, 2 bytes each where no value
        // passes 65535.
        assert_eq!(size_of(&grid, 2, guid(&grid, 2, 2, BOTTOM)), 4);
        assert_eq!(size_of(&grid, 2, guid(&grid, 2, 2, RIGHT)), 10);
        assert_eq!(size_of(&grid, 1 << 20, guid(&grid, 2, 2, BOTTOM)), 8);
        assert_eq!(size_of(&grid, 1 << 20, guid(&grid, 2, 2, RIGHT)), 20);
    }

    #[test]
    fn an_edge_is_narrow_while_the_cells_up_to_its_last_allow() {
        // Tile (0, 0) ends at row 4, column 3: scores up to 3 gains.
        let grid = Grid::new(10, 7, 4, 3);
        assert_eq!(width_of(&grid, 21_845, 0, 0), Width::Narrow);
        assert_eq!(width_of(&grid, 21_846, 0, 0), Width::Wide);
        // Tile (1, 1) ends at row 8, column 6.
        assert_eq!(width_of(&grid, 10_922, 1, 1), Width::Narrow);
        assert_eq!(width_of(&grid, 10_923, 1, 1), Width::Wide);
    }
}
