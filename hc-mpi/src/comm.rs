//! Communicators: checks shared by every operation, creation
//! (`MPI_Comm_idup`, `MPI_Comm_split`), and freeing on drop.
//!
//! A [`Comm`] is a cheap, clonable handle. The communicator it names is
//! freed (`MPI_Comm_free`, through the engine) when its last handle is
//! dropped; the ones still alive at shutdown are freed then. A creation
//! that fails is an error, and its handle is never used.

use std::sync::Arc;

use mpi::ffi;

use crate::engine::{Engine, EngineState, Submission};
use crate::op::{dispose, mpi_error, Buffers, Cancel, Done, OpId, Operation, Reply, Start};
use crate::raw::{Handle, RawComm};
use crate::request::{request, Request, Status};
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

/// A communicator whose operations run on the communication engine.
///
/// Cheap to clone and usable from any task or thread. The communicator is
/// freed when its last clone is dropped.
#[derive(Clone)]
pub struct Comm {
    inner: Arc<CommInner>,
}

struct CommInner {
    raw: RawComm,
    rank: i32,
    size: i32,
    tag_ub: i32,
    engine: Arc<Engine>,
    /// Created for a user (freed on drop), not the world duplicate (freed
    /// by the engine's shutdown).
    owned: bool,
}

impl Drop for CommInner {
    fn drop(&mut self) {
        if self.owned {
            // Refused (and freed by shutdown instead) once the engine closed.
            self.engine.submit(Submission::FreeComm(self.raw));
        }
    }
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comm")
            .field("rank", &self.inner.rank)
            .field("size", &self.inner.size)
            .finish()
    }
}

impl Comm {
    pub(crate) fn new(
        raw: RawComm,
        rank: i32,
        size: i32,
        tag_ub: i32,
        engine: Arc<Engine>,
        owned: bool,
    ) -> Self {
        Comm {
            inner: Arc::new(CommInner {
                raw,
                rank,
                size,
                tag_ub,
                engine,
                owned,
            }),
        }
    }

    pub(crate) fn raw(&self) -> RawComm {
        self.inner.raw
    }

    pub(crate) fn engine(&self) -> &Arc<Engine> {
        &self.inner.engine
    }

    /// Hands `op` to the engine.
    pub(crate) fn start(&self, op: impl Operation + 'static) {
        self.inner.engine.submit(Submission::Start(Box::new(op)));
    }

    /// A new request for operation `op` (cancelled as `cancel` says) on
    /// this communicator's engine.
    pub(crate) fn request<T: Send>(
        &self,
        op: &'static str,
        cancel: Cancel,
    ) -> (Reply<T>, Request<T>, OpId) {
        request(&self.inner.engine, op, cancel)
    }

    /// This process's rank in the communicator (`MPI_Comm_rank`).
    pub fn rank(&self) -> i32 {
        self.inner.rank
    }

    /// Number of processes in the communicator (`MPI_Comm_size`).
    pub fn size(&self) -> i32 {
        self.inner.size
    }

    /// The largest valid tag (`MPI_TAG_UB`).
    pub fn tag_upper_bound(&self) -> i32 {
        self.inner.tag_ub
    }

    /// Lets the communication engine progress from a task that computes
    /// for a long time without waiting. In shared placement the
    /// computation workers step the engine only between tasks, so message
    /// services (steal requests, DDDF requests, remote event posts) would
    /// wait for the task to end; calling this every few microseconds of
    /// work answers them meanwhile. It steps the engine once unless another
    /// thread is stepping it, and does nothing in dedicated placement,
    /// where the communication worker progresses it. Returns whether
    /// anything progressed.
    ///
    /// ```no_run
    /// # let hc = hc_mpi::Hcmpi::init()?;
    /// let world = hc.world().clone();
    /// hc.finish(|s| {
    ///     s.spawn(move |_| {
    ///         for block in 0..1_000u64 {
    ///             std::hint::black_box(block.pow(3)); // some work
    ///             world.progress();
    ///         }
    ///     });
    /// });
    /// # Ok::<(), hc_mpi::Error>(())
    /// ```
    pub fn progress(&self) -> bool {
        let engine = &self.inner.engine;
        engine.placement() == crate::Placement::Shared && engine.try_step(true) == Some(true)
    }

    pub(crate) fn check_rank(&self, op: &'static str, rank: i32) -> Result<(), Error> {
        if (0..self.size()).contains(&rank) {
            Ok(())
        } else {
            Err(Error::InvalidRank {
                op,
                rank,
                size: self.size(),
            })
        }
    }

    pub(crate) fn check_tag(&self, op: &'static str, tag: i32) -> Result<(), Error> {
        if (0..=self.tag_upper_bound()).contains(&tag) {
            Ok(())
        } else {
            Err(Error::InvalidTag {
                op,
                tag,
                max: self.tag_upper_bound(),
            })
        }
    }

    pub(crate) fn raw_source(&self, op: &'static str, source: Source) -> Result<i32, Error> {
        match source {
            Source::Rank(rank) => self.check_rank(op, rank).map(|()| rank),
            // SAFETY: reading an immutable MPI constant.
            Source::Any => Ok(unsafe { ffi::RSMPI_ANY_SOURCE }),
        }
    }

    pub(crate) fn raw_tag(&self, op: &'static str, tag: TagMatch) -> Result<i32, Error> {
        match tag {
            TagMatch::Tag(tag) => self.check_tag(op, tag).map(|()| tag),
            // SAFETY: reading an immutable MPI constant.
            TagMatch::Any => Ok(unsafe { ffi::RSMPI_ANY_TAG }),
        }
    }

    /// `MPI_Comm_idup` (MPI 4.0 §7.4.2): a request for a new communicator
    /// with the same processes, isolating its traffic. Collective over this
    /// communicator.
    pub fn iduplicate(&self) -> Request<Comm> {
        let (reply, request, id) = self.request(DupOp::NAME, Cancel::Never);
        self.start(DupOp {
            id,
            parent: self.clone(),
            new: Box::new(Handle(null_comm())),
            reply,
        });
        request
    }

    /// `MPI_Comm_idup`, waited for.
    ///
    /// # Errors
    /// An MPI error (the communicator is then not created).
    pub fn duplicate(&self) -> Result<Comm, Error> {
        self.iduplicate().wait().map(|(comm, _)| comm)
    }

    /// `MPI_Comm_split` (§7.4.2): ranks passing the same `color` form a new
    /// communicator, ordered by `key` (ties by rank); `None` as color leaves
    /// this rank out (`MPI_UNDEFINED`) and returns `None`. Collective; MPI
    /// has no non-blocking split, so it blocks the engine until every rank
    /// of `comm` joins it: it belongs in setup code.
    ///
    /// # Errors
    /// [`Error::NegativeColor`], or an MPI error.
    pub fn split(&self, color: Option<i32>, key: i32) -> Result<Option<Comm>, Error> {
        let raw_color = match color {
            Some(color) if color < 0 => return Err(Error::NegativeColor { color }),
            Some(color) => color,
            // SAFETY: reading an immutable MPI constant.
            None => unsafe { ffi::RSMPI_UNDEFINED },
        };
        let (reply, request, id) = self.request(SplitOp::NAME, Cancel::Never);
        self.start(SplitOp {
            id,
            parent: self.clone(),
            color: raw_color,
            key,
            new: Handle(null_comm()),
            reply,
        });
        request.wait().map(|(comm, _)| comm)
    }

    /// `HCMPI_Cancel` / `MPI_Cancel` (MPI 4.0 §3.8.4): asks MPI to cancel
    /// `request`. The request still completes; its status says whether the
    /// cancel took effect. Cancelling a completed request does nothing.
    ///
    /// # Errors
    /// [`Error::NotCancellable`] for a nonblocking collective or
    /// communicator creation, which MPI cannot cancel (MPI 4.0 §6.12): such
    /// a request can only complete.
    pub fn cancel<T: Send>(&self, request: &Request<T>) -> Result<(), Error> {
        if request.cancel_kind() == Cancel::Never {
            return Err(Error::NotCancellable { op: request.op() });
        }
        self.inner.engine.submit(Submission::Cancel(request.id()));
        Ok(())
    }

    /// A communicator created by MPI, as handed to the user.
    fn adopt(&self, raw: RawComm, state: &mut EngineState) -> Comm {
        let (mut rank, mut size) = (0, 0);
        // SAFETY: a valid communicator just created by MPI; out-parameters.
        unsafe {
            ffi::MPI_Comm_rank(raw.0, &mut rank);
            ffi::MPI_Comm_size(raw.0, &mut size);
        }
        state.adopt_communicator(raw);
        Comm::new(
            raw,
            rank,
            size,
            self.tag_upper_bound(),
            Arc::clone(&self.inner.engine),
            true,
        )
    }
}

fn null_comm() -> ffi::MPI_Comm {
    // SAFETY: reading an immutable predefined handle.
    unsafe { ffi::RSMPI_COMM_NULL }
}

/// `MPI_Comm_idup` (MPI 4.0 §7.4.2).
struct DupOp {
    id: OpId,
    parent: Comm,
    /// Where MPI writes the new handle, at a stable address until the
    /// request completes.
    new: Box<RawComm>,
    reply: Reply<Comm>,
}

impl DupOp {
    const NAME: &'static str = "comm_idup";
}

impl Operation for DupOp {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn describe(&self) -> String {
        Self::NAME.to_owned()
    }

    fn id(&self) -> OpId {
        self.id
    }

    fn cancel_kind(&self) -> Cancel {
        Cancel::Never
    }

    fn start(&mut self, _state: &mut EngineState) -> Start {
        let mut request = crate::raw::null_request();
        // SAFETY: `new` is a heap slot owned by this operation until the
        // request completes; the parent communicator is valid.
        let code =
            unsafe { ffi::MPI_Comm_idup(self.parent.raw().0, &mut self.new.0, &mut request) };
        started(code, request)
    }

    fn complete(self: Box<Self>, done: Done, state: &mut EngineState) {
        let result = if done.is_ok() && self.new.0 != null_comm() {
            Ok((self.parent.adopt(*self.new, state), Status::empty(0, false)))
        } else if done.is_ok() {
            Err(mpi_error(Self::NAME, ffi::MPI_ERR_COMM as i32, None))
        } else {
            // Never adopted: a failed creation's handle is not a communicator.
            Err(mpi_error(Self::NAME, done.code, None))
        };
        self.reply.complete(result);
    }

    fn fail(self: Box<Self>, error: Error, buffers: Buffers) {
        let DupOp { new, reply, .. } = *self;
        dispose(new, buffers);
        reply.complete(Err(error));
    }
}

/// `MPI_Comm_split` (MPI 4.0 §7.4.2); blocking, so it completes in `start`.
struct SplitOp {
    id: OpId,
    parent: Comm,
    color: i32,
    key: i32,
    new: RawComm,
    reply: Reply<Option<Comm>>,
}

impl SplitOp {
    const NAME: &'static str = "comm_split";
}

impl Operation for SplitOp {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn describe(&self) -> String {
        format!("{}(color={}, key={})", Self::NAME, self.color, self.key)
    }

    fn id(&self) -> OpId {
        self.id
    }

    fn cancel_kind(&self) -> Cancel {
        Cancel::Never
    }

    fn start(&mut self, _state: &mut EngineState) -> Start {
        // SAFETY: valid communicator; `new` is an out-parameter.
        let code = unsafe {
            ffi::MPI_Comm_split(self.parent.raw().0, self.color, self.key, &mut self.new.0)
        };
        if code == ffi::MPI_SUCCESS as i32 {
            Start::Completed(Done::ok())
        } else {
            Start::Failed(code)
        }
    }

    fn complete(self: Box<Self>, _done: Done, state: &mut EngineState) {
        let comm = (self.new.0 != null_comm()).then(|| self.parent.adopt(self.new, state));
        self.reply.complete(Ok((comm, Status::empty(0, false))));
    }

    fn fail(self: Box<Self>, error: Error, _buffers: Buffers) {
        self.reply.complete(Err(error));
    }
}

/// The [`Start`] of a non-blocking call that returned `code`.
pub(crate) fn started(code: i32, request: ffi::MPI_Request) -> Start {
    if code == ffi::MPI_SUCCESS as i32 {
        Start::Posted(request)
    } else {
        Start::Failed(code)
    }
}
