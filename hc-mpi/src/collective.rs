//! Non-blocking collectives (MPI 4.0 §6.12), posted by the engine and
//! completed through `MPI_Testsome` like point-to-point requests.
//!
//! Unlike the 2013 paper, where the communication worker blocked inside a
//! collective, nothing here blocks the engine: point-to-point traffic keeps
//! flowing while a collective is in progress. Each collective has a
//! request-returning form (`ibarrier`, `iallreduce`, …) whose [`Request`] is
//! awaitable, and a blocking form (`barrier`, `allreduce`, …) for leaf code.
//!
//! Every rank must call the same collectives in the same order, as in MPI.
//! Buffer lengths are checked against the communicator before MPI sees them.

use std::os::raw::{c_int, c_void};

use mpi::datatype::Equivalence;
use mpi::ffi;

use crate::comm::{started, Comm};
use crate::engine::EngineState;
use crate::error::BufferProblem;
use crate::op::{count, dispose, mpi_error, Buffers, Cancel, Done, OpId, Operation, Reply, Start};
use crate::raw::{null_request, DatatypeOf, Handle, RawComm, RawOp};
use crate::request::{Request, Status};
use crate::user_op::{OpSpec, Reduction, UserOp};
use crate::Error;

/// Which collective, with the arguments that are not buffers.
#[derive(Debug)]
pub(crate) enum CollectiveKind {
    Bcast {
        root: i32,
    },
    Reduce {
        root: i32,
        count: i32,
    },
    Allreduce,
    Scan,
    Exscan,
    Gather {
        root: i32,
    },
    Gatherv {
        root: i32,
        counts: Vec<c_int>,
        displs: Vec<c_int>,
    },
    Scatter {
        root: i32,
        chunk: i32,
    },
    Scatterv {
        root: i32,
        counts: Vec<c_int>,
        displs: Vec<c_int>,
    },
    Allgather,
    Alltoall {
        chunk: i32,
    },
}

impl CollectiveKind {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            CollectiveKind::Bcast { .. } => "ibcast",
            CollectiveKind::Reduce { .. } => "ireduce",
            CollectiveKind::Allreduce => "iallreduce",
            CollectiveKind::Scan => "iscan",
            CollectiveKind::Exscan => "iexscan",
            CollectiveKind::Gather { .. } => "igather",
            CollectiveKind::Gatherv { .. } => "igatherv",
            CollectiveKind::Scatter { .. } => "iscatter",
            CollectiveKind::Scatterv { .. } => "iscatterv",
            CollectiveKind::Allgather => "iallgather",
            CollectiveKind::Alltoall { .. } => "ialltoall",
        }
    }
}

/// MPI's predefined reduction operations (MPI 4.0 §6.9.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// `MPI_SUM`
    Sum,
    /// `MPI_PROD`
    Prod,
    /// `MPI_MIN`
    Min,
    /// `MPI_MAX`
    Max,
    /// `MPI_LAND` (integers)
    LogicalAnd,
    /// `MPI_LOR` (integers)
    LogicalOr,
    /// `MPI_LXOR` (integers)
    LogicalXor,
    /// `MPI_BAND` (integers)
    BitAnd,
    /// `MPI_BOR` (integers)
    BitOr,
    /// `MPI_BXOR` (integers)
    BitXor,
    /// A user-defined reduction (MPI 4.0 §6.9.5); see [`ReduceOp::user`].
    User(UserOp),
}

impl ReduceOp {
    /// The user-defined reduction `R` (`MPI_Op_create`, MPI 4.0 §6.9.5).
    /// A collective using it must reduce vectors of `R::Element`.
    pub fn user<R: Reduction>() -> ReduceOp {
        ReduceOp::User(UserOp::of::<R>())
    }

    /// Rejects a user reduction over another element type than `E`.
    fn check_element<E: 'static>(self, op: &'static str) -> Result<(), Error> {
        match self {
            ReduceOp::User(user) if !user.accepts::<E>() => Err(Error::ReductionType {
                op,
                reduction: user.name(),
                element: std::any::type_name::<E>(),
            }),
            _ => Ok(()),
        }
    }

    fn spec(self) -> OpSpec {
        // SAFETY: reading immutable predefined MPI handles.
        OpSpec::Predefined(Handle(unsafe {
            match self {
                ReduceOp::Sum => ffi::RSMPI_SUM,
                ReduceOp::Prod => ffi::RSMPI_PROD,
                ReduceOp::Min => ffi::RSMPI_MIN,
                ReduceOp::Max => ffi::RSMPI_MAX,
                ReduceOp::LogicalAnd => ffi::RSMPI_LAND,
                ReduceOp::LogicalOr => ffi::RSMPI_LOR,
                ReduceOp::LogicalXor => ffi::RSMPI_LXOR,
                ReduceOp::BitAnd => ffi::RSMPI_BAND,
                ReduceOp::BitOr => ffi::RSMPI_BOR,
                ReduceOp::BitXor => ffi::RSMPI_BXOR,
                ReduceOp::User(user) => return OpSpec::User(user),
            }
        }))
    }
}

impl CollectiveKind {
    /// Posts the collective. Returns the MPI return code.
    ///
    /// # Safety
    /// Engine only; `send` and `recv` must stay alive and unmoved until the
    /// request completes, and have the lengths the API layer checked for
    /// this kind.
    unsafe fn post<E: Equivalence>(
        &self,
        send: &[E],
        recv: &mut [E],
        op: Option<RawOp>,
        comm: RawComm,
        request: &mut ffi::MPI_Request,
    ) -> c_int {
        let datatype_guard = DatatypeOf::<E>::new();
        let datatype = datatype_guard.raw();
        let op = op.map(|o| o.0);
        let (sp, sn) = (send.as_ptr() as *const c_void, send.len() as c_int);
        let (rp, rn) = (recv.as_mut_ptr() as *mut c_void, recv.len() as c_int);
        let comm = comm.0;
        // SAFETY: forwarded from this function's contract; every pointer and
        // count pair describes a live buffer of that many elements.
        unsafe {
            match self {
                CollectiveKind::Bcast { root } => {
                    ffi::MPI_Ibcast(rp, rn, datatype, *root, comm, request)
                }
                CollectiveKind::Reduce { root, count: n } => ffi::MPI_Ireduce(
                    sp,
                    rp,
                    *n,
                    datatype,
                    op.expect("reduction op"),
                    *root,
                    comm,
                    request,
                ),
                CollectiveKind::Allreduce => ffi::MPI_Iallreduce(
                    sp,
                    rp,
                    sn,
                    datatype,
                    op.expect("reduction op"),
                    comm,
                    request,
                ),
                CollectiveKind::Scan => ffi::MPI_Iscan(
                    sp,
                    rp,
                    sn,
                    datatype,
                    op.expect("reduction op"),
                    comm,
                    request,
                ),
                CollectiveKind::Exscan => ffi::MPI_Iexscan(
                    sp,
                    rp,
                    sn,
                    datatype,
                    op.expect("reduction op"),
                    comm,
                    request,
                ),
                CollectiveKind::Gather { root } => {
                    ffi::MPI_Igather(sp, sn, datatype, rp, sn, datatype, *root, comm, request)
                }
                CollectiveKind::Gatherv {
                    root,
                    counts,
                    displs,
                } => ffi::MPI_Igatherv(
                    sp,
                    sn,
                    datatype,
                    rp,
                    counts.as_ptr(),
                    displs.as_ptr(),
                    datatype,
                    *root,
                    comm,
                    request,
                ),
                CollectiveKind::Scatter { root, chunk } => ffi::MPI_Iscatter(
                    sp, *chunk, datatype, rp, *chunk, datatype, *root, comm, request,
                ),
                CollectiveKind::Scatterv {
                    root,
                    counts,
                    displs,
                } => ffi::MPI_Iscatterv(
                    sp,
                    counts.as_ptr(),
                    displs.as_ptr(),
                    datatype,
                    rp,
                    rn,
                    datatype,
                    *root,
                    comm,
                    request,
                ),
                CollectiveKind::Allgather => {
                    ffi::MPI_Iallgather(sp, sn, datatype, rp, sn, datatype, comm, request)
                }
                CollectiveKind::Alltoall { chunk } => {
                    ffi::MPI_Ialltoall(sp, *chunk, datatype, rp, *chunk, datatype, comm, request)
                }
            }
        }
    }
}

/// A non-blocking collective with a send and a receive buffer; the receive
/// buffer is handed back.
struct CollectiveOp<E> {
    id: OpId,
    kind: CollectiveKind,
    send: Vec<E>,
    recv: Vec<E>,
    op: Option<OpSpec>,
    comm: RawComm,
    reply: Reply<Vec<E>>,
}

impl<E: Equivalence + Send + 'static> Operation for CollectiveOp<E> {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn describe(&self) -> String {
        format!("{:?}", self.kind)
    }

    fn id(&self) -> OpId {
        self.id
    }

    fn bytes(&self) -> usize {
        std::mem::size_of_val(self.send.as_slice())
    }

    fn cancel_kind(&self) -> Cancel {
        Cancel::Never
    }

    fn start(&mut self, state: &mut EngineState) -> Start {
        let op = match self.op.map(|spec| state.user_ops.resolve(spec)).transpose() {
            Ok(op) => op,
            Err(code) => return Start::Failed(code),
        };
        let mut request = null_request();
        // SAFETY: the buffers are owned by this operation until completion
        // and their lengths were checked by the API layer for this kind.
        let code = unsafe {
            self.kind
                .post(&self.send, &mut self.recv, op, self.comm, &mut request)
        };
        started(code, request)
    }

    fn complete(self: Box<Self>, done: Done, state: &mut EngineState) {
        let name = self.kind.name();
        let CollectiveOp { recv, reply, .. } = *self;
        let result = if !done.is_ok() {
            Err(mpi_error(name, done.code, None))
        } else if done.cancelled() && state.shutting_down {
            Err(Error::Shutdown { op: name })
        } else {
            let status = Status::empty(recv.len(), done.cancelled());
            Ok((recv, status))
        };
        reply.complete(result);
    }

    fn fail(self: Box<Self>, error: Error, buffers: Buffers) {
        let CollectiveOp {
            send, recv, reply, ..
        } = *self;
        dispose((send, recv), buffers);
        reply.complete(Err(error));
    }
}

/// `MPI_Ibarrier` (MPI 4.0 §6.12.1).
struct BarrierOp {
    id: OpId,
    comm: RawComm,
    reply: Reply<()>,
}

impl BarrierOp {
    const NAME: &'static str = "ibarrier";
}

impl Operation for BarrierOp {
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
        let mut request = null_request();
        // SAFETY: a valid communicator; `request` is an out-parameter.
        let code = unsafe { ffi::MPI_Ibarrier(self.comm.0, &mut request) };
        started(code, request)
    }

    fn complete(self: Box<Self>, done: Done, state: &mut EngineState) {
        let result = if !done.is_ok() {
            Err(mpi_error(Self::NAME, done.code, None))
        } else if done.cancelled() && state.shutting_down {
            Err(Error::Shutdown { op: Self::NAME })
        } else {
            Ok(((), Status::empty(0, done.cancelled())))
        };
        self.reply.complete(result);
    }

    fn fail(self: Box<Self>, error: Error, _buffers: Buffers) {
        self.reply.complete(Err(error));
    }
}

fn check_root(comm: &Comm, op: &'static str, root: i32) -> Result<(), Error> {
    comm.check_rank(op, root)
}

/// Collective operations on a communicator. Every rank must make the same
/// calls in the same order.
impl Comm {
    fn collective<E: Equivalence + Send + 'static>(
        &self,
        kind: CollectiveKind,
        send: Vec<E>,
        recv: Vec<E>,
        op: Option<ReduceOp>,
    ) -> Result<Request<Vec<E>>, Error> {
        let name = kind.name();
        count(name, send.len())?;
        count(name, recv.len())?;
        let (reply, request, id) = self.request(name, Cancel::Never);
        self.start(CollectiveOp {
            id,
            kind,
            send,
            recv,
            op: op.map(ReduceOp::spec),
            comm: self.raw(),
            reply,
        });
        Ok(request)
    }

    /// `MPI_Ibarrier` (MPI 4.0 §6.12.1); see `examples/fig6_barrier.rs`.
    pub fn ibarrier(&self) -> Request<()> {
        let (reply, request, id) = self.request(BarrierOp::NAME, Cancel::Never);
        self.start(BarrierOp {
            id,
            comm: self.raw(),
            reply,
        });
        request
    }

    /// `MPI_Barrier`, waiting the HCMPI way (Fig. 6 of the paper).
    ///
    /// # Errors
    /// An MPI error.
    pub fn barrier(&self) -> Result<(), Error> {
        self.ibarrier().wait().map(|_| ())
    }

    /// `MPI_Ibcast` (§6.12.2): `data` is sent from `root` and overwritten
    /// elsewhere; every rank passes a buffer of the same length.
    ///
    /// # Errors
    /// A bad root or an oversized buffer.
    pub fn ibcast<E: Equivalence + Send + 'static>(
        &self,
        data: Vec<E>,
        root: i32,
    ) -> Result<Request<Vec<E>>, Error> {
        check_root(self, "ibcast", root)?;
        self.collective(CollectiveKind::Bcast { root }, Vec::new(), data, None)
    }

    /// `MPI_Bcast`.
    ///
    /// # Errors
    /// As [`ibcast`](Self::ibcast), or an MPI error.
    pub fn bcast<E: Equivalence + Send + 'static>(
        &self,
        data: Vec<E>,
        root: i32,
    ) -> Result<Vec<E>, Error> {
        Ok(self.ibcast(data, root)?.wait()?.0)
    }

    /// `MPI_Ireduce` (§6.12.4): element-wise reduction of every rank's
    /// `data` to `root`, which receives the result; other ranks receive an
    /// empty vector.
    ///
    /// # Errors
    /// A bad root or an oversized buffer.
    pub fn ireduce<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        op: ReduceOp,
        root: i32,
    ) -> Result<Request<Vec<E>>, Error> {
        check_root(self, "ireduce", root)?;
        op.check_element::<E>("ireduce")?;
        let n = count("ireduce", data.len())?;
        let recv_len = if self.rank() == root { data.len() } else { 0 };
        let recv = vec![E::default(); recv_len];
        let send = data;
        self.collective(
            CollectiveKind::Reduce { root, count: n },
            send,
            recv,
            Some(op),
        )
    }

    /// `MPI_Reduce`.
    ///
    /// # Errors
    /// As [`ireduce`](Self::ireduce), or an MPI error.
    pub fn reduce<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        op: ReduceOp,
        root: i32,
    ) -> Result<Vec<E>, Error> {
        Ok(self.ireduce(data, op, root)?.wait()?.0)
    }

    fn same_shape_reduction<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        kind: CollectiveKind,
        data: Vec<E>,
        op: ReduceOp,
    ) -> Result<Request<Vec<E>>, Error> {
        let name = kind.name();
        op.check_element::<E>(name)?;
        let recv = vec![E::default(); data.len()];
        let send = data;
        self.collective(kind, send, recv, Some(op))
    }

    /// `MPI_Iallreduce` (§6.12.5): every rank receives the element-wise
    /// reduction of all ranks' `data`.
    ///
    /// # Errors
    /// An oversized buffer.
    pub fn iallreduce<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        op: ReduceOp,
    ) -> Result<Request<Vec<E>>, Error> {
        self.same_shape_reduction(CollectiveKind::Allreduce, data, op)
    }

    /// `MPI_Allreduce`.
    ///
    /// # Errors
    /// As [`iallreduce`](Self::iallreduce), or an MPI error.
    pub fn allreduce<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        op: ReduceOp,
    ) -> Result<Vec<E>, Error> {
        Ok(self.iallreduce(data, op)?.wait()?.0)
    }

    /// `MPI_Iscan` (§6.12.10): inclusive prefix reduction over ranks.
    ///
    /// # Errors
    /// An oversized buffer.
    pub fn iscan<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        op: ReduceOp,
    ) -> Result<Request<Vec<E>>, Error> {
        self.same_shape_reduction(CollectiveKind::Scan, data, op)
    }

    /// `MPI_Scan`.
    ///
    /// # Errors
    /// As [`iscan`](Self::iscan), or an MPI error.
    pub fn scan<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        op: ReduceOp,
    ) -> Result<Vec<E>, Error> {
        Ok(self.iscan(data, op)?.wait()?.0)
    }

    /// `MPI_Iexscan` (§6.12.11): exclusive prefix reduction; rank 0's
    /// result is undefined by MPI and returned as default values.
    ///
    /// # Errors
    /// An oversized buffer.
    pub fn iexscan<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        op: ReduceOp,
    ) -> Result<Request<Vec<E>>, Error> {
        self.same_shape_reduction(CollectiveKind::Exscan, data, op)
    }

    /// `MPI_Exscan`.
    ///
    /// # Errors
    /// As [`iexscan`](Self::iexscan), or an MPI error.
    pub fn exscan<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        op: ReduceOp,
    ) -> Result<Vec<E>, Error> {
        Ok(self.iexscan(data, op)?.wait()?.0)
    }

    /// `MPI_Igather` (§6.12.3): `root` receives every rank's `data` (all of
    /// the same length), concatenated in rank order; others receive an empty
    /// vector.
    ///
    /// # Errors
    /// A bad root or an oversized buffer.
    pub fn igather<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        root: i32,
    ) -> Result<Request<Vec<E>>, Error> {
        check_root(self, "igather", root)?;
        let total = if self.rank() == root {
            data.len() * self.size() as usize
        } else {
            0
        };
        let recv = vec![E::default(); total];
        let send = data;
        self.collective(CollectiveKind::Gather { root }, send, recv, None)
    }

    /// `MPI_Gather`.
    ///
    /// # Errors
    /// As [`igather`](Self::igather), or an MPI error.
    pub fn gather<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        root: i32,
    ) -> Result<Vec<E>, Error> {
        Ok(self.igather(data, root)?.wait()?.0)
    }

    /// `MPI_Igatherv` (§6.12.3): like [`igather`](Self::igather) with a
    /// per-rank length; `counts` (one entry per rank) is needed on `root`
    /// only and must match what each rank sends.
    ///
    /// # Errors
    /// A bad root, a `counts` of the wrong length on root, oversized buffers.
    pub fn igatherv<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        counts: &[usize],
        root: i32,
    ) -> Result<Request<Vec<E>>, Error> {
        check_root(self, "igatherv", root)?;
        let (counts, displs, total) = if self.rank() == root {
            self.layout("igatherv", counts)?
        } else {
            (Vec::new(), Vec::new(), 0)
        };
        let recv = vec![E::default(); total];
        let send = data;
        self.collective(
            CollectiveKind::Gatherv {
                root,
                counts,
                displs,
            },
            send,
            recv,
            None,
        )
    }

    /// `MPI_Iscatter` (§6.12.4): `root`'s `data` (length `size × chunk`) is
    /// split into `chunk`-element pieces, piece `r` going to rank `r`. Other
    /// ranks pass an empty vector.
    ///
    /// # Errors
    /// A bad root, a root buffer of the wrong length, oversized buffers.
    pub fn iscatter<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        chunk: usize,
        root: i32,
    ) -> Result<Request<Vec<E>>, Error> {
        check_root(self, "iscatter", root)?;
        if self.rank() == root && data.len() != chunk * self.size() as usize {
            return Err(self.wrong_length("iscatter", data.len(), chunk));
        }
        let n = count("iscatter", chunk)?;
        let recv = vec![E::default(); chunk];
        let send = data;
        self.collective(CollectiveKind::Scatter { root, chunk: n }, send, recv, None)
    }

    /// `MPI_Scatter`.
    ///
    /// # Errors
    /// As [`iscatter`](Self::iscatter), or an MPI error.
    pub fn scatter<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        chunk: usize,
        root: i32,
    ) -> Result<Vec<E>, Error> {
        Ok(self.iscatter(data, chunk, root)?.wait()?.0)
    }

    /// `MPI_Iscatterv` (§6.12.4): `root` sends `counts[r]` consecutive
    /// elements of `data` to rank `r`; each rank passes its own `recv_count`.
    ///
    /// # Errors
    /// A bad root, `counts` not matching `data` on root, oversized buffers.
    pub fn iscatterv<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        counts: &[usize],
        recv_count: usize,
        root: i32,
    ) -> Result<Request<Vec<E>>, Error> {
        check_root(self, "iscatterv", root)?;
        let (counts, displs) = if self.rank() == root {
            let (counts, displs, total) = self.layout("iscatterv", counts)?;
            if total != data.len() {
                return Err(Error::BadCollectiveBuffer {
                    op: "iscatterv",
                    problem: BufferProblem::CountsTotal {
                        total,
                        len: data.len(),
                    },
                });
            }
            (counts, displs)
        } else {
            (Vec::new(), Vec::new())
        };
        let recv = vec![E::default(); recv_count];
        let send = data;
        self.collective(
            CollectiveKind::Scatterv {
                root,
                counts,
                displs,
            },
            send,
            recv,
            None,
        )
    }

    /// `MPI_Iallgather` (§6.12.6): every rank receives every rank's `data`
    /// (all of the same length), concatenated in rank order.
    ///
    /// # Errors
    /// An oversized buffer.
    pub fn iallgather<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
    ) -> Result<Request<Vec<E>>, Error> {
        let recv = vec![E::default(); data.len() * self.size() as usize];
        let send = data;
        self.collective(CollectiveKind::Allgather, send, recv, None)
    }

    /// `MPI_Allgather`.
    ///
    /// # Errors
    /// As [`iallgather`](Self::iallgather), or an MPI error.
    pub fn allgather<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
    ) -> Result<Vec<E>, Error> {
        Ok(self.iallgather(data)?.wait()?.0)
    }

    /// `MPI_Ialltoall` (§6.12.7): `data` (length `size × chunk`) holds one
    /// `chunk` for each rank; the result holds the chunk each rank sent here.
    ///
    /// # Errors
    /// A buffer whose length is not `size × chunk`, oversized buffers.
    pub fn ialltoall<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        chunk: usize,
    ) -> Result<Request<Vec<E>>, Error> {
        if data.len() != chunk * self.size() as usize {
            return Err(self.wrong_length("ialltoall", data.len(), chunk));
        }
        let n = count("ialltoall", chunk)?;
        let recv = vec![E::default(); data.len()];
        let send = data;
        self.collective(CollectiveKind::Alltoall { chunk: n }, send, recv, None)
    }

    /// `MPI_Alltoall`.
    ///
    /// # Errors
    /// As [`ialltoall`](Self::ialltoall), or an MPI error.
    pub fn alltoall<E: Equivalence + Default + Clone + Send + 'static>(
        &self,
        data: Vec<E>,
        chunk: usize,
    ) -> Result<Vec<E>, Error> {
        Ok(self.ialltoall(data, chunk)?.wait()?.0)
    }

    /// Counts and displacements for the v-variants, checked.
    fn layout(
        &self,
        op: &'static str,
        counts: &[usize],
    ) -> Result<(Vec<c_int>, Vec<c_int>, usize), Error> {
        if counts.len() != self.size() as usize {
            return Err(Error::BadCollectiveBuffer {
                op,
                problem: BufferProblem::CountsPerRank {
                    given: counts.len(),
                    ranks: self.size() as usize,
                },
            });
        }
        let mut raw_counts = Vec::with_capacity(counts.len());
        let mut displs = Vec::with_capacity(counts.len());
        let mut total = 0usize;
        for &n in counts {
            displs.push(count(op, total)?);
            raw_counts.push(count(op, n)?);
            total += n;
        }
        count(op, total)?;
        Ok((raw_counts, displs, total))
    }

    /// The error of a buffer that is not `chunk` elements per rank.
    fn wrong_length(&self, op: &'static str, len: usize, chunk: usize) -> Error {
        let ranks = self.size() as usize;
        Error::BadCollectiveBuffer {
            op,
            problem: BufferProblem::WrongLength {
                len,
                expected: chunk * ranks,
                chunk,
                ranks,
            },
        }
    }
}
