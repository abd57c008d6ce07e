//! Type-erased units of work as they sit in the deques.
//!
//! A [`JobRef`] is a pointer plus the function that knows how to run (and free)
//! what it points at, after rayon-core's design: it lets heap tasks, tasks
//! released by DDFs and tasks injected from foreign threads share one deque
//! type without a second allocation.
//!
//! A task spawned on a worker does not take a heap allocation of its own
//! when its closure is small ([`CachedJob`]): it is written into a fixed-size
//! block from the worker's [`TaskCache`], and the worker that runs it puts
//! the block back into its own cache just before calling the closure, so the
//! task's first spawn reuses the block while it is still in cache.

use std::alloc::{self, Layout};
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use crate::registry::WorkerThread;
use std::sync::Mutex;

/// A type-erased job: a data pointer and the function that consumes it.
#[derive(Debug)]
pub(crate) struct JobRef {
    pointer: *const (),
    execute_fn: unsafe fn(*const ()),
}

// SAFETY: a `JobRef` is only created (see `JobRef::new`) for jobs whose data is
// `Send`; moving the pointer to another thread moves ownership of that data.
unsafe impl Send for JobRef {}

impl JobRef {
    /// # Safety
    /// `pointer` must stay valid until `execute_fn(pointer)` is called, which
    /// happens exactly once; the data behind it must be safe to hand to another
    /// thread.
    pub(crate) unsafe fn new(pointer: *const (), execute_fn: unsafe fn(*const ())) -> JobRef {
        JobRef {
            pointer,
            execute_fn,
        }
    }

    /// What tells this job apart from others in a deque: its data pointer.
    #[inline]
    pub(crate) fn id(&self) -> *const () {
        self.pointer
    }

    /// Runs the job, consuming it.
    #[inline]
    pub(crate) fn execute(self) {
        // SAFETY: `JobRef::new`'s contract makes the pointer valid and this the
        // one call; `self` is consumed so it cannot run twice.
        unsafe { (self.execute_fn)(self.pointer) }
    }
}

/// A closure boxed on the heap, run once.
pub(crate) struct HeapJob<F> {
    body: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Boxes `body` and returns a job reference that owns the box.
    ///
    /// # Safety
    /// `body` may borrow data; the caller guarantees the job is executed before
    /// any of that data is invalidated (a finish scope waits for it).
    pub(crate) unsafe fn into_job_ref(body: F) -> JobRef {
        let pointer = Box::into_raw(Box::new(HeapJob { body }));
        // SAFETY: the box stays alive until `execute` frees it, exactly once; F
        // is Send so the box may move between threads.
        unsafe { JobRef::new(pointer as *const (), Self::execute) }
    }

    /// # Safety
    /// `this` came from `into_job_ref` and has not been executed.
    unsafe fn execute(this: *const ()) {
        // SAFETY: see the function contract: we own the box now.
        let job = unsafe { Box::from_raw(this as *mut HeapJob<F>) };
        (job.body)();
    }
}

/// Marker giving a raw pointer `Send`/`Sync` so a closure may carry it.
///
/// Closures must call [`SendPtr::get`] rather than read the field, so that the
/// 2021 disjoint-capture rules capture the wrapper and not the bare pointer.
pub(crate) struct SendPtr<T: ?Sized>(*const T, PhantomData<*const T>);

// SAFETY: every use pairs the pointer with a protocol (finish counter, DDF
// release) that keeps the pointee alive and only shares `Sync` data through it.
unsafe impl<T: ?Sized> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized> Sync for SendPtr<T> {}

impl<T: ?Sized> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: ?Sized> Copy for SendPtr<T> {}

impl<T: ?Sized> SendPtr<T> {
    pub(crate) fn new(ptr: *const T) -> Self {
        SendPtr(ptr, PhantomData)
    }

    pub(crate) fn get(self) -> *const T {
        self.0
    }
}

/// Size of a task block: closures up to this size (and alignment
/// [`BLOCK_ALIGN`]) are stored in a recycled block instead of their own heap
/// allocation.
pub(crate) const BLOCK_BYTES: usize = 128;
/// Alignment of a task block.
pub(crate) const BLOCK_ALIGN: usize = 16;
/// Free blocks a worker keeps; when it would hold more, it hands a batch
/// of [`BATCH`] to its pool's [`BlockPool`] (a thief that runs many tasks
/// spawned elsewhere would otherwise hoard them, while the spawner allocates
/// new ones and the allocator's cross-thread frees contend on a lock).
const CACHE_CAPACITY: usize = 2 * BATCH;
/// Blocks moved between a worker's cache and the pool at a time.
const BATCH: usize = 256;
/// Batches the pool keeps; beyond that, blocks go back to the allocator.
const POOL_BATCHES: usize = 64;

#[repr(C, align(16))]
pub(crate) struct Block {
    bytes: [MaybeUninit<u8>; BLOCK_BYTES],
}

const _: () = assert!(std::mem::align_of::<Block>() == BLOCK_ALIGN);

/// The free blocks of a pool's workers in transit from the workers that
/// free them (thieves) to those that allocate them (spawners): whole
/// batches, each an intrusive list of [`BATCH`] blocks, under a lock taken
/// once per batch.
pub(crate) struct BlockPool {
    batches: Mutex<Vec<SendBlock>>,
}

/// A batch head in the pool.
struct SendBlock(NonNull<Block>);

// SAFETY: a free block is plain memory owned by whoever holds its list.
unsafe impl Send for SendBlock {}

impl BlockPool {
    pub(crate) fn new() -> BlockPool {
        BlockPool {
            batches: Mutex::new(Vec::new()),
        }
    }

    fn take(&self) -> Option<NonNull<Block>> {
        self.lock().pop().map(|batch| batch.0)
    }

    /// Keeps a batch, or frees it if the pool is full.
    ///
    /// # Safety
    /// `batch` heads a list of `BATCH` free blocks (see `TaskCache`).
    unsafe fn give(&self, batch: NonNull<Block>) {
        let mut batches = self.lock();
        if batches.len() < POOL_BATCHES {
            batches.push(SendBlock(batch));
        } else {
            drop(batches);
            // SAFETY: forwarded contract.
            unsafe { free_list(batch.as_ptr()) };
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SendBlock>> {
        self.batches.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for BlockPool {
    fn drop(&mut self) {
        for batch in self.lock().drain(..) {
            // SAFETY: every kept batch is a list of free blocks.
            unsafe { free_list(batch.0.as_ptr()) };
        }
    }
}

impl std::fmt::Debug for BlockPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockPool")
            .field("batches", &self.lock().len())
            .finish()
    }
}

fn block_layout() -> Layout {
    Layout::new::<Block>()
}

/// # Safety
/// `block` is free; its first word is writable.
unsafe fn set_next(block: *mut Block, next: *mut Block) {
    // SAFETY: see the contract.
    unsafe { block.cast::<*mut Block>().write(next) }
}

/// # Safety
/// `block` is a free block in a list (its first word is the next one).
unsafe fn next(block: *mut Block) -> *mut Block {
    // SAFETY: see the contract.
    unsafe { block.cast::<*mut Block>().read() }
}

/// Frees a null-terminated list of free blocks.
///
/// # Safety
/// Every block of the list is free and allocated with `block_layout`.
unsafe fn free_list(mut block: *mut Block) {
    while !block.is_null() {
        // SAFETY: see the contract.
        let following = unsafe { next(block) };
        // SAFETY: as above.
        unsafe { alloc::dealloc(block.cast(), block_layout()) };
        block = following;
    }
}

/// A worker's free task blocks: an intrusive stack threaded through the
/// blocks themselves (a free block's first word points to the next),
/// backed by its pool's [`BlockPool`].
///
/// Only its worker's thread touches it, so it needs no synchronization; a
/// block freed by a thief joins the thief's cache, which is where the
/// thief's own next spawn will want it.
pub(crate) struct TaskCache {
    head: Cell<*mut Block>,
    len: Cell<usize>,
}

impl TaskCache {
    pub(crate) fn new() -> TaskCache {
        TaskCache {
            head: Cell::new(ptr::null_mut()),
            len: Cell::new(0),
        }
    }

    #[inline]
    pub(crate) fn allocate(&self, pool: &BlockPool) -> NonNull<Block> {
        match NonNull::new(self.head.get()) {
            Some(block) => {
                // SAFETY: a cached block is free and in the list.
                self.head.set(unsafe { next(block.as_ptr()) });
                self.len.set(self.len.get() - 1);
                block
            }
            None => self.refill(pool),
        }
    }

    #[cold]
    fn refill(&self, pool: &BlockPool) -> NonNull<Block> {
        if let Some(batch) = pool.take() {
            // SAFETY: a pool batch is a list of `BATCH` free blocks.
            self.head.set(unsafe { next(batch.as_ptr()) });
            self.len.set(BATCH - 1);
            return batch;
        }
        // SAFETY: `Block` has a non-zero size.
        let raw = unsafe { alloc::alloc(block_layout()) };
        NonNull::new(raw.cast::<Block>())
            .unwrap_or_else(|| alloc::handle_alloc_error(block_layout()))
    }

    /// # Safety
    /// `block` came from some worker's `allocate` and is no longer used.
    #[inline]
    pub(crate) unsafe fn release(&self, block: NonNull<Block>, pool: &BlockPool) {
        if self.len.get() == CACHE_CAPACITY {
            self.spill(pool);
        }
        // SAFETY: the block is free.
        unsafe { set_next(block.as_ptr(), self.head.get()) };
        self.head.set(block.as_ptr());
        self.len.set(self.len.get() + 1);
    }

    /// Hands the top `BATCH` blocks to the pool.
    #[cold]
    fn spill(&self, pool: &BlockPool) {
        let batch = self.head.get();
        let mut last = batch;
        for _ in 1..BATCH {
            // SAFETY: the cache holds more than `BATCH` blocks.
            last = unsafe { next(last) };
        }
        // SAFETY: `last` is in the list; cutting after it leaves the batch
        // null-terminated and the rest in the cache.
        unsafe {
            self.head.set(next(last));
            set_next(last, ptr::null_mut());
        }
        self.len.set(self.len.get() - BATCH);
        // SAFETY: `batch` heads `BATCH` free blocks.
        unsafe { pool.give(NonNull::new(batch).expect("a full cache")) };
    }
}

impl Drop for TaskCache {
    fn drop(&mut self) {
        // SAFETY: the cached blocks are free.
        unsafe { free_list(self.head.replace(ptr::null_mut())) };
    }
}

/// Work that runs once from a task block.
pub(crate) trait BlockTask: Send {
    fn run(self);
}

/// A task stored in a block from its spawning worker's cache (tasks too
/// large for a block get a heap allocation of their own instead).
pub(crate) struct CachedJob<T>(PhantomData<T>);

impl<T: BlockTask> CachedJob<T> {
    const FITS: bool =
        std::mem::size_of::<T>() <= BLOCK_BYTES && std::mem::align_of::<T>() <= BLOCK_ALIGN;

    /// Makes a job whose task `init` writes into the slot it is given.
    ///
    /// # Safety
    /// `init` must initialize the whole `T`; as [`HeapJob::into_job_ref`]
    /// for the task's borrows.
    #[inline]
    pub(crate) unsafe fn emplace(worker: &WorkerThread, init: impl FnOnce(*mut T)) -> JobRef {
        if Self::FITS {
            let block = worker.allocate_block();
            init(block.as_ptr().cast::<T>());
            // SAFETY: the block holds a `T` (large and aligned enough:
            // `FITS`) until `execute` moves it out, once.
            unsafe { JobRef::new(block.as_ptr() as *const (), Self::execute) }
        } else {
            let slot = Box::into_raw(Box::<T>::new_uninit()).cast::<T>();
            init(slot);
            // SAFETY: the box holds an initialized `T` until
            // `execute_boxed` frees it, once.
            unsafe { JobRef::new(slot as *const (), Self::execute_boxed) }
        }
    }

    /// # Safety
    /// `this` is a block written by `emplace` and has not run.
    unsafe fn execute(this: *const ()) {
        let block = NonNull::new(this as *mut Block).expect("null task block");
        // SAFETY: the block holds a `T` written by `emplace`; it is moved
        // out once, here.
        let task = unsafe { block.as_ptr().cast::<T>().read() };
        // Recycle the block before running the task: its first spawn will
        // take it back, still in cache.
        match WorkerThread::current() {
            // SAFETY: the block is free now.
            Some(worker) => unsafe { worker.release_block(block) },
            // SAFETY: allocated with this layout, and free.
            None => unsafe { alloc::dealloc(block.as_ptr().cast(), block_layout()) },
        }
        task.run();
    }

    /// # Safety
    /// `this` is a box written by `emplace` and has not run.
    unsafe fn execute_boxed(this: *const ()) {
        // SAFETY: see the contract; the box is ours now.
        let task = unsafe { Box::from_raw(this as *mut T) };
        (*task).run();
    }
}

/// Copies a value that was just built by the caller, a word at a time.
///
/// A value a caller has just written with word-sized stores is still in the
/// store buffer; copying it with wider (vector) loads, as a plain move
/// compiles to, defeats store-to-load forwarding and stalls the pipeline
/// for a dozen cycles or more, on every spawn. Volatile word loads cannot
/// be merged into wider ones.
///
/// # Safety
/// `dst` is valid for writing a `T` and does not overlap `src`; the caller
/// treats `*src` as moved.
#[inline(always)]
pub(crate) unsafe fn move_by_words<T>(src: &T, dst: *mut T) {
    const WORD: usize = std::mem::size_of::<usize>();
    if std::mem::size_of::<T>().is_multiple_of(WORD) && std::mem::align_of::<T>() >= WORD {
        let words = std::mem::size_of::<T>() / WORD;
        // As `MaybeUninit`: padding bytes are copied without being read as
        // integers.
        let from = (src as *const T).cast::<MaybeUninit<usize>>();
        let to = dst.cast::<MaybeUninit<usize>>();
        for i in 0..words {
            // SAFETY: both are valid and aligned for `words` words.
            unsafe { to.add(i).write(from.add(i).read_volatile()) };
        }
    } else {
        // SAFETY: as above.
        unsafe { ptr::copy_nonoverlapping(src, dst, 1) };
    }
}
