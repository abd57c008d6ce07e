//! Communicators and the point-to-point API (Table I of the HCMPI paper).
//!
//! Every call here builds a communication task and hands it to the
//! communication worker; none calls MPI itself. Ranks and tags are checked
//! before anything is queued. Buffers are owned `Vec`s, moved in and handed
//! back by the completed [`Request`], so a buffer cannot be touched (or
//! freed) while MPI uses it.

use std::sync::Arc;

use mpi::datatype::Equivalence;

use crate::op::{Buffer, Operation};
use crate::raw::{Handle, RawComm};
use crate::request::{Request, RequestCell, Status};
use crate::shared::Shared;
use crate::Error;

/// Which sender a receive or probe matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A specific rank.
    Rank(i32),
    /// `MPI_ANY_SOURCE`.
    Any,
}

/// Which tag a receive or probe matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagMatch {
    /// A specific tag.
    Tag(i32),
    /// `MPI_ANY_TAG`.
    Any,
}

/// `MPI_ANY_SOURCE`.
pub const ANY_SOURCE: Source = Source::Any;
/// `MPI_ANY_TAG`.
pub const ANY_TAG: TagMatch = TagMatch::Any;

impl From<i32> for Source {
    fn from(rank: i32) -> Self {
        Source::Rank(rank)
    }
}

impl From<i32> for TagMatch {
    fn from(tag: i32) -> Self {
        TagMatch::Tag(tag)
    }
}

/// A communicator whose operations run on the communication worker.
///
/// Cheap to clone and usable from any task or thread.
#[derive(Clone)]
pub struct Comm {
    raw: RawComm,
    rank: i32,
    size: i32,
    tag_ub: i32,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comm")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish()
    }
}

impl Comm {
    pub(crate) fn new(
        raw: RawComm,
        rank: i32,
        size: i32,
        tag_ub: i32,
        shared: Arc<Shared>,
    ) -> Self {
        Comm {
            raw,
            rank,
            size,
            tag_ub,
            shared,
        }
    }

    pub(crate) fn raw(&self) -> RawComm {
        self.raw
    }

    pub(crate) fn submit(&self, op: Operation, name: &'static str) {
        self.shared.submit(op, name);
    }

    /// This process's rank in the communicator (`MPI_Comm_rank`).
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// Number of processes in the communicator (`MPI_Comm_size`).
    pub fn size(&self) -> i32 {
        self.size
    }

    /// The largest valid tag (`MPI_TAG_UB`).
    pub fn tag_upper_bound(&self) -> i32 {
        self.tag_ub
    }

    pub(crate) fn check_rank(&self, op: &'static str, rank: i32) -> Result<(), Error> {
        if (0..self.size).contains(&rank) {
            Ok(())
        } else {
            Err(Error::InvalidRank {
                op,
                rank,
                size: self.size,
            })
        }
    }

    fn check_tag(&self, op: &'static str, tag: i32) -> Result<(), Error> {
        if (0..=self.tag_ub).contains(&tag) {
            Ok(())
        } else {
            Err(Error::InvalidTag {
                op,
                tag,
                max: self.tag_ub,
            })
        }
    }

    fn raw_source(&self, op: &'static str, source: Source) -> Result<i32, Error> {
        match source {
            Source::Rank(rank) => self.check_rank(op, rank).map(|()| rank),
            // SAFETY: reading an immutable MPI constant.
            Source::Any => Ok(unsafe { mpi::ffi::RSMPI_ANY_SOURCE }),
        }
    }

    fn raw_tag(&self, op: &'static str, tag: TagMatch) -> Result<i32, Error> {
        match tag {
            TagMatch::Tag(tag) => self.check_tag(op, tag).map(|()| tag),
            // SAFETY: reading an immutable MPI constant.
            TagMatch::Any => Ok(unsafe { mpi::ffi::RSMPI_ANY_TAG }),
        }
    }

    fn send_request<E: Equivalence + Send + 'static>(
        &self,
        op: &'static str,
        data: Vec<E>,
        dest: i32,
        tag: i32,
        synchronous: bool,
    ) -> Result<Request<Vec<E>>, Error> {
        self.check_rank(op, dest)?;
        self.check_tag(op, tag)?;
        let buffer = Buffer::from_vec(data, op)?;
        let cell = RequestCell::new();
        let request = Request::new(cell.clone(), op);
        self.submit(
            Operation::Send {
                buffer,
                dest,
                tag,
                comm: self.raw,
                synchronous,
                request: cell,
            },
            op,
        );
        Ok(request)
    }

    /// `HCMPI_Isend` / `MPI_Isend` (MPI 4.0 §3.7.2): sends `data` to `dest`.
    /// The request hands the vector back once it may be reused.
    /// See `examples/fig4_await.rs`.
    ///
    /// # Errors
    /// A bad rank or tag, or an oversized buffer.
    pub fn isend<E: Equivalence + Send + 'static>(
        &self,
        data: Vec<E>,
        dest: i32,
        tag: i32,
    ) -> Result<Request<Vec<E>>, Error> {
        self.send_request("isend", data, dest, tag, false)
    }

    /// `MPI_Issend` (§3.7.2): like [`isend`](Self::isend), completing only
    /// once the matching receive has started.
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    pub fn issend<E: Equivalence + Send + 'static>(
        &self,
        data: Vec<E>,
        dest: i32,
        tag: i32,
    ) -> Result<Request<Vec<E>>, Error> {
        self.send_request("issend", data, dest, tag, true)
    }

    /// `HCMPI_Send`: [`isend`](Self::isend), then wait (running other tasks
    /// meanwhile when called from a task).
    ///
    /// # Errors
    /// As [`isend`](Self::isend), or an MPI error.
    pub fn send<E: Equivalence + Send + 'static>(
        &self,
        data: Vec<E>,
        dest: i32,
        tag: i32,
    ) -> Result<Vec<E>, Error> {
        Ok(self.isend(data, dest, tag)?.wait()?.0)
    }

    /// `HCMPI_Irecv` / `MPI_Irecv` (§3.7.2): receives into `buffer`, whose
    /// length is the largest message accepted. On completion the vector is
    /// truncated to the received count (also in [`Status::count`]).
    /// See `examples/fig3_finish_irecv.rs`.
    ///
    /// # Errors
    /// A bad rank or tag, or an oversized buffer. A longer message completes
    /// the request with [`Error::Truncated`].
    pub fn irecv<E: Equivalence + Send + 'static>(
        &self,
        buffer: Vec<E>,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Request<Vec<E>>, Error> {
        let source = self.raw_source("irecv", source.into())?;
        let tag = self.raw_tag("irecv", tag.into())?;
        let buffer = Buffer::from_vec(buffer, "irecv")?.truncating::<E>();
        let cell = RequestCell::new();
        let request = Request::new(cell.clone(), "irecv");
        self.submit(
            Operation::Recv {
                buffer,
                source,
                tag,
                comm: self.raw,
                request: cell,
            },
            "irecv",
        );
        Ok(request)
    }

    /// `HCMPI_Recv`: [`irecv`](Self::irecv), then wait.
    ///
    /// # Errors
    /// As [`irecv`](Self::irecv), or an MPI error.
    pub fn recv<E: Equivalence + Send + 'static>(
        &self,
        buffer: Vec<E>,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<(Vec<E>, Status), Error> {
        self.irecv(buffer, source, tag)?.wait()
    }

    /// A request that completes once a message matching `source` and `tag`
    /// is pending (polled `MPI_Iprobe`, §3.8.1); its status counts elements
    /// of `E`. The message is not received.
    ///
    /// # Errors
    /// A bad rank or tag.
    pub fn iprobe<E: Equivalence>(
        &self,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Request<()>, Error> {
        let source = self.raw_source("probe", source.into())?;
        let tag = self.raw_tag("probe", tag.into())?;
        let cell = RequestCell::new();
        let request = Request::new(cell.clone(), "probe");
        self.submit(
            Operation::Probe {
                source,
                tag,
                comm: self.raw,
                datatype: crate::raw::DatatypeOf::of::<E>(),
                request: cell,
            },
            "probe",
        );
        Ok(request)
    }

    /// `MPI_Probe`: waits until a matching message is pending and returns
    /// its status (counting elements of `E`).
    ///
    /// # Errors
    /// A bad rank or tag, or an MPI error.
    pub fn probe<E: Equivalence>(
        &self,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Status, Error> {
        Ok(self.iprobe::<E>(source, tag)?.wait()?.1)
    }

    fn create(&self, split: Option<(i32, i32)>, name: &'static str) -> Result<Option<Comm>, Error> {
        let cell = RequestCell::new();
        let request: Request<Option<crate::worker::CreatedComm>> = Request::new(cell.clone(), name);
        self.submit(
            Operation::CommCreate {
                split,
                comm: self.raw,
                // SAFETY: reading an immutable predefined handle.
                new: Box::new(Handle(unsafe { mpi::ffi::RSMPI_COMM_NULL })),
                request: cell,
            },
            name,
        );
        let (created, _) = request.wait()?;
        Ok(
            created
                .map(|c| Comm::new(c.raw, c.rank, c.size, self.tag_ub, Arc::clone(&self.shared))),
        )
    }

    /// `MPI_Comm_idup` (MPI 4.0 §7.4.2): a new communicator with the same
    /// processes, isolating its traffic. Collective over this communicator.
    ///
    /// # Errors
    /// An MPI error.
    pub fn duplicate(&self) -> Result<Comm, Error> {
        self.create(None, "comm_idup")?.ok_or(Error::Mpi {
            op: "comm_idup",
            class: 0,
            message: "MPI returned MPI_COMM_NULL".into(),
        })
    }

    /// `MPI_Comm_split` (§7.4.2): ranks passing the same `color` form a new
    /// communicator, ordered by `key` (ties by rank); `None` as color leaves
    /// this rank out (`MPI_UNDEFINED`) and returns `None`. Collective; it is
    /// the one call that blocks the communication worker (MPI has no
    /// non-blocking split), so it belongs in setup code.
    ///
    /// # Errors
    /// A negative color, or an MPI error.
    pub fn split(&self, color: Option<i32>, key: i32) -> Result<Option<Comm>, Error> {
        let raw_color = match color {
            Some(c) if c < 0 => {
                return Err(Error::BadCollectiveBuffer {
                    op: "comm_split",
                    what: format!("color {c} is negative (use None to leave a rank out)"),
                })
            }
            Some(c) => c,
            // SAFETY: reading an immutable MPI constant.
            None => unsafe { mpi::ffi::RSMPI_UNDEFINED },
        };
        self.create(Some((raw_color, key)), "comm_split")
    }

    /// `HCMPI_Cancel` / `MPI_Cancel` (§3.8.4): asks MPI to cancel `request`.
    /// The request still completes; its status says whether the cancel took
    /// effect. Cancelling a completed request does nothing.
    pub fn cancel<T>(&self, request: &Request<T>) {
        self.submit(
            Operation::Cancel {
                target: Arc::clone(&request.cell),
            },
            "cancel",
        );
    }
}
