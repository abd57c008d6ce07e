//! Non-blocking collectives (MPI 4.0 §6.12), posted by the communication
//! worker and completed through `MPI_Testsome` like point-to-point requests.
//!
//! Unlike the 2013 paper, where the communication worker blocked inside a
//! collective, nothing here blocks it: point-to-point traffic keeps flowing
//! while a collective is in progress. Each collective has a
//! request-returning form (`ibarrier`, `iallreduce`, …) whose [`Request`] is
//! awaitable, and a blocking form (`barrier`, `allreduce`, …) that waits the
//! HCMPI way — by running other tasks on a computation worker.
//!
//! Every rank must call the same collectives in the same order, as in MPI.
//! Buffer lengths are checked against the communicator before MPI sees them.

use std::os::raw::{c_int, c_void};

use mpi::datatype::Equivalence;
use mpi::ffi;

use crate::comm::Comm;
use crate::op::{Buffer, Operation};
use crate::raw::{Handle, RawComm, RawOp};
use crate::request::{Request, RequestCell};
use crate::user_op::{OpSpec, Reduction, UserOp};
use crate::Error;

/// Which collective, with the arguments that are not buffers.
#[derive(Debug)]
pub(crate) enum CollectiveKind {
    Barrier,
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
            CollectiveKind::Barrier => "ibarrier",
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
            ReduceOp::User(user) if !user.accepts::<E>() => Err(Error::BadCollectiveBuffer {
                op,
                what: format!(
                    "user reduction {} does not combine elements of type {}",
                    user.name(),
                    std::any::type_name::<E>()
                ),
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

fn ptr(buffer: Option<&Buffer>) -> *mut c_void {
    buffer.map_or(std::ptr::null_mut(), |b| b.ptr)
}

fn count(buffer: Option<&Buffer>) -> c_int {
    buffer.map_or(0, |b| b.count)
}

/// Posts the collective. Returns the MPI return code.
///
/// # Safety
/// Must run on the communication worker; the buffers must stay alive and
/// unmoved until the request completes, and have the sizes the API layer
/// checked for `kind`.
pub(crate) unsafe fn post(
    kind: &CollectiveKind,
    send: Option<&Buffer>,
    recv: Option<&Buffer>,
    op: Option<RawOp>,
    comm: RawComm,
    request: &mut ffi::MPI_Request,
) -> c_int {
    let datatype = send.or(recv).map(|b| b.datatype.resolve().0);
    // SAFETY: reading an immutable predefined handle.
    let datatype = datatype.unwrap_or(unsafe { ffi::RSMPI_UINT8_T });
    let op = op.map(|o| o.0);
    let (sp, rp) = (ptr(send) as *const c_void, ptr(recv));
    let comm = comm.0;
    // SAFETY: forwarded from this function's contract; every pointer/count
    // pair describes a live buffer of that many elements of `datatype`.
    unsafe {
        match kind {
            CollectiveKind::Barrier => ffi::MPI_Ibarrier(comm, request),
            CollectiveKind::Bcast { root } => {
                ffi::MPI_Ibcast(rp, count(recv), datatype, *root, comm, request)
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
                count(send),
                datatype,
                op.expect("reduction op"),
                comm,
                request,
            ),
            CollectiveKind::Scan => ffi::MPI_Iscan(
                sp,
                rp,
                count(send),
                datatype,
                op.expect("reduction op"),
                comm,
                request,
            ),
            CollectiveKind::Exscan => ffi::MPI_Iexscan(
                sp,
                rp,
                count(send),
                datatype,
                op.expect("reduction op"),
                comm,
                request,
            ),
            CollectiveKind::Gather { root } => ffi::MPI_Igather(
                sp,
                count(send),
                datatype,
                rp,
                count(send),
                datatype,
                *root,
                comm,
                request,
            ),
            CollectiveKind::Gatherv {
                root,
                counts,
                displs,
            } => ffi::MPI_Igatherv(
                sp,
                count(send),
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
                count(recv),
                datatype,
                *root,
                comm,
                request,
            ),
            CollectiveKind::Allgather => ffi::MPI_Iallgather(
                sp,
                count(send),
                datatype,
                rp,
                count(send),
                datatype,
                comm,
                request,
            ),
            CollectiveKind::Alltoall { chunk } => {
                ffi::MPI_Ialltoall(sp, *chunk, datatype, rp, *chunk, datatype, comm, request)
            }
        }
    }
}

fn check_root(comm: &Comm, op: &'static str, root: i32) -> Result<(), Error> {
    comm.check_rank(op, root)
}

fn to_count(op: &'static str, len: usize) -> Result<c_int, Error> {
    c_int::try_from(len).map_err(|_| Error::BufferTooLarge { op, len })
}

/// Collective operations on a communicator. Every rank must make the same
/// calls in the same order.
impl Comm {
    fn collective<T: Send + 'static>(
        &self,
        kind: CollectiveKind,
        send: Option<Buffer>,
        recv: Option<Buffer>,
        op: Option<ReduceOp>,
    ) -> Request<T> {
        let name = kind.name();
        let cell = RequestCell::new();
        let request = Request::new(cell.clone(), name);
        self.submit(
            Operation::Collective {
                kind,
                send,
                recv,
                op: op.map(ReduceOp::spec),
                comm: self.raw(),
                request: cell,
            },
            name,
        );
        request
    }

    /// `MPI_Ibarrier` (MPI 4.0 §6.12.1); see `examples/fig6_barrier.rs`.
    pub fn ibarrier(&self) -> Request<()> {
        self.collective(CollectiveKind::Barrier, None, None, None)
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
        let buffer = Buffer::from_vec(data, "ibcast")?;
        Ok(self.collective(CollectiveKind::Bcast { root }, None, Some(buffer), None))
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
        let n = to_count("ireduce", data.len())?;
        let recv_len = if self.rank() == root { data.len() } else { 0 };
        let recv = Buffer::from_vec(vec![E::default(); recv_len], "ireduce")?;
        let send = Buffer::from_vec(data, "ireduce")?;
        Ok(self.collective(
            CollectiveKind::Reduce { root, count: n },
            Some(send),
            Some(recv),
            Some(op),
        ))
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
        let recv = Buffer::from_vec(vec![E::default(); data.len()], name)?;
        let send = Buffer::from_vec(data, name)?;
        Ok(self.collective(kind, Some(send), Some(recv), Some(op)))
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
        let recv = Buffer::from_vec(vec![E::default(); total], "igather")?;
        let send = Buffer::from_vec(data, "igather")?;
        Ok(self.collective(
            CollectiveKind::Gather { root },
            Some(send),
            Some(recv),
            None,
        ))
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
        let recv = Buffer::from_vec(vec![E::default(); total], "igatherv")?;
        let send = Buffer::from_vec(data, "igatherv")?;
        Ok(self.collective(
            CollectiveKind::Gatherv {
                root,
                counts,
                displs,
            },
            Some(send),
            Some(recv),
            None,
        ))
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
            return Err(Error::BadCollectiveBuffer {
                op: "iscatter",
                what: format!(
                    "root buffer has {} elements, expected chunk {chunk} x {} ranks",
                    data.len(),
                    self.size()
                ),
            });
        }
        let n = to_count("iscatter", chunk)?;
        let recv = Buffer::from_vec(vec![E::default(); chunk], "iscatter")?;
        let send = Buffer::from_vec(data, "iscatter")?;
        Ok(self.collective(
            CollectiveKind::Scatter { root, chunk: n },
            Some(send),
            Some(recv),
            None,
        ))
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
                    what: format!(
                        "counts add up to {total} but the root buffer has {} elements",
                        data.len()
                    ),
                });
            }
            (counts, displs)
        } else {
            (Vec::new(), Vec::new())
        };
        let recv = Buffer::from_vec(vec![E::default(); recv_count], "iscatterv")?;
        let send = Buffer::from_vec(data, "iscatterv")?;
        Ok(self.collective(
            CollectiveKind::Scatterv {
                root,
                counts,
                displs,
            },
            Some(send),
            Some(recv),
            None,
        ))
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
        let recv = Buffer::from_vec(
            vec![E::default(); data.len() * self.size() as usize],
            "iallgather",
        )?;
        let send = Buffer::from_vec(data, "iallgather")?;
        Ok(self.collective(CollectiveKind::Allgather, Some(send), Some(recv), None))
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
            return Err(Error::BadCollectiveBuffer {
                op: "ialltoall",
                what: format!(
                    "buffer has {} elements, expected chunk {chunk} x {} ranks",
                    data.len(),
                    self.size()
                ),
            });
        }
        let n = to_count("ialltoall", chunk)?;
        let recv = Buffer::from_vec(vec![E::default(); data.len()], "ialltoall")?;
        let send = Buffer::from_vec(data, "ialltoall")?;
        Ok(self.collective(
            CollectiveKind::Alltoall { chunk: n },
            Some(send),
            Some(recv),
            None,
        ))
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
                what: format!("{} counts given for {} ranks", counts.len(), self.size()),
            });
        }
        let mut raw_counts = Vec::with_capacity(counts.len());
        let mut displs = Vec::with_capacity(counts.len());
        let mut total = 0usize;
        for &count in counts {
            displs.push(to_count(op, total)?);
            raw_counts.push(to_count(op, count)?);
            total += count;
        }
        to_count(op, total)?;
        Ok((raw_counts, displs, total))
    }
}
