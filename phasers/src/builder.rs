//! Creating phasers: shape (tree or flat), phase action, accumulation.
//!
//! Every constructor takes the [`Scope`] of the finish the phaser belongs
//! to (its immediately enclosing finish): the creator's registration, and
//! every registration made from it, live no longer than that finish (see
//! `registration`).

use hc_runtime::Scope;

use crate::accum::{combiner, AccumOp, AccumValue};
use crate::core::{Action, Core, CoreConfig};
use crate::global::GlobalStage;
use crate::mode::{Mode, PhaserError};
use crate::registration::Registration;
use crate::tree::Combiner;

/// Default fan-in of the phaser tree.
pub const DEFAULT_DEGREE: usize = 4;
/// Default number of leaf sub-phasers.
pub const DEFAULT_LEAVES: usize = 4;

/// Entry point: [`Phaser::new`] for a default phaser, [`Phaser::builder`]
/// to choose its shape, a phase action or an accumulation.
#[derive(Debug)]
pub struct Phaser;

impl Phaser {
    /// A tree phaser with the default shape, belonging to the finish of
    /// `scope`; the calling task is registered in `mode` (HC's
    /// `phaser_create`), and leaves when the returned registration is
    /// dropped — at the latest when the finish body that created it ends.
    ///
    /// ```
    /// use hcmpi_phasers::{spawn_phased, Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     let ph = Phaser::new(s, Mode::SignalWait);
    ///     for _ in 0..4 {
    ///         spawn_phased(s, ph.register(Mode::SignalWait).unwrap(), |_, mut reg| async move {
    ///             reg.next().await.unwrap();
    ///         });
    ///     }
    /// });
    /// ```
    // `Phaser` is only a namespace: creating a phaser hands back the
    // creator's registration, the one handle that can use it.
    #[allow(clippy::new_ret_no_self)]
    pub fn new<'scope>(scope: &'scope Scope<'scope, '_>, mode: Mode) -> Registration<'scope, ()> {
        Phaser::builder()
            .build(scope, mode)
            .expect("a new phaser always has room for its creator")
    }

    /// A builder.
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser, Shape};
    ///
    /// hc_runtime::finish(|s| {
    ///     let ph = Phaser::builder().flat().build(s, Mode::SignalWait).unwrap();
    ///     assert_eq!(ph.mode(), Mode::SignalWait);
    /// });
    /// ```
    pub fn builder() -> PhaserBuilder {
        PhaserBuilder::default()
    }
}

/// The tree's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One sub-phaser holding every member: a single counter.
    Flat,
    /// `leaves` leaf sub-phasers under inner nodes of fan-in `degree`.
    Tree {
        /// Number of leaves; registrations are spread over them round-robin.
        leaves: usize,
        /// Fan-in of inner nodes (at least 2).
        degree: usize,
    },
}

/// Configures a phaser before creating it.
pub struct PhaserBuilder {
    pub(crate) shape: Shape,
    pub(crate) action: Option<Action>,
}

impl std::fmt::Debug for PhaserBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhaserBuilder")
            .field("shape", &self.shape)
            .field("action", &self.action.is_some())
            .finish()
    }
}

impl Default for PhaserBuilder {
    fn default() -> Self {
        PhaserBuilder {
            shape: Shape::Tree {
                leaves: DEFAULT_LEAVES,
                degree: DEFAULT_DEGREE,
            },
            action: None,
        }
    }
}

impl PhaserBuilder {
    /// The flat phaser: one counter for everyone.
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     let flat = Phaser::builder().flat().build(s, Mode::SignalWait).unwrap();
    ///     assert_eq!(flat.mode(), Mode::SignalWait);
    /// });
    /// ```
    pub fn flat(mut self) -> Self {
        self.shape = Shape::Flat;
        self
    }

    /// A tree of `leaves` leaf sub-phasers and inner fan-in `degree`.
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    ///
    /// hc_runtime::finish(|s| {
    ///     // 8 leaves under 2 inner nodes of fan-in 4, under the root.
    ///     assert!(Phaser::builder().tree(8, 4).build(s, Mode::SignalWait).is_ok());
    /// });
    /// ```
    pub fn tree(mut self, leaves: usize, degree: usize) -> Self {
        self.shape = Shape::Tree { leaves, degree };
        self
    }

    /// Sets the shape.
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser, Shape};
    ///
    /// hc_runtime::finish(|s| {
    ///     for shape in [Shape::Flat, Shape::Tree { leaves: 3, degree: 2 }] {
    ///         assert!(Phaser::builder().shape(shape).build(s, Mode::SignalWait).is_ok());
    ///     }
    /// });
    /// ```
    pub fn shape(mut self, shape: Shape) -> Self {
        self.shape = shape;
        self
    }

    /// A single-task phase action: `action(phase)` runs once per phase, on
    /// the worker of the task whose signal (or drop) completed the phase
    /// locally, after every local signal of the phase and before any waiter
    /// leaves it (for an hcmpi phaser: before the phase's collective
    /// completes). A panic in it fails the phaser.
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser};
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    ///
    /// let ran = Arc::new(AtomicU64::new(0));
    /// let counter = Arc::clone(&ran);
    /// hc_runtime::finish(|s| {
    ///     let mut ph = Phaser::builder()
    ///         .phase_action(move |phase| assert_eq!(counter.fetch_add(1, Ordering::SeqCst), phase))
    ///         .build(s, Mode::SignalWait)
    ///         .unwrap();
    ///     s.spawn_future(async move {
    ///         ph.next().await.unwrap();
    ///         ph.next().await.unwrap();
    ///     });
    /// });
    /// assert_eq!(ran.load(Ordering::SeqCst), 2);
    /// ```
    pub fn phase_action(mut self, action: impl FnMut(u64) + Send + 'static) -> Self {
        self.action = Some(Box::new(action));
        self
    }

    /// Creates a barrier phaser belonging to the finish of `scope` and
    /// registers the caller in `mode`.
    ///
    /// ```
    /// use hcmpi_phasers::{Mode, Phaser, PhaserError};
    ///
    /// hc_runtime::finish(|s| {
    ///     assert!(Phaser::builder().tree(2, 2).build(s, Mode::SignalWait).is_ok());
    ///     assert!(matches!(
    ///         Phaser::builder().tree(0, 2).build(s, Mode::SignalWait),
    ///         Err(PhaserError::BadShape { .. })
    ///     ));
    /// });
    /// ```
    ///
    /// # Errors
    /// [`PhaserError::BadShape`] for a tree with no leaf or degree < 2.
    pub fn build<'scope>(
        self,
        scope: &'scope Scope<'scope, '_>,
        mode: Mode,
    ) -> Result<Registration<'scope, ()>, PhaserError> {
        // The scope binds the registration's lifetime; nothing else of it
        // is needed.
        let _ = scope;
        self.create(None, None, mode)
    }

    /// Creates an accumulator (an intra-node `accum`) reducing `V` with `op`,
    /// belonging to the finish of `scope`, and registers the caller in
    /// `mode`.
    ///
    /// ```
    /// use hcmpi_phasers::{AccumOp, Mode, Phaser, PhaserError};
    ///
    /// hc_runtime::finish(|s| {
    ///     assert!(Phaser::builder().build_accum::<f64>(s, AccumOp::Sum, Mode::SignalWait).is_ok());
    ///     assert!(matches!(
    ///         Phaser::builder().build_accum::<f64>(s, AccumOp::BitXor, Mode::SignalWait),
    ///         Err(PhaserError::UnsupportedOp { .. })
    ///     ));
    /// });
    /// ```
    ///
    /// # Errors
    /// [`PhaserError::UnsupportedOp`] (bitwise or logical `op` on floats),
    /// or as [`build`](Self::build).
    pub fn build_accum<'scope, V: AccumValue>(
        self,
        scope: &'scope Scope<'scope, '_>,
        op: AccumOp,
        mode: Mode,
    ) -> Result<Registration<'scope, V>, PhaserError> {
        let _ = scope; // binds the lifetime, as in `build`
        let combiner = combiner::<V>(op)?;
        self.create(Some(combiner), None, mode)
    }

    /// Creates the phaser; the caller chooses the registration's scope.
    pub(crate) fn create<'scope, V>(
        self,
        combiner: Option<Combiner>,
        global: Option<Box<dyn GlobalStage>>,
        mode: Mode,
    ) -> Result<Registration<'scope, V>, PhaserError> {
        let (leaves, degree) = match self.shape {
            Shape::Flat => (1, 2),
            Shape::Tree { leaves, degree } => {
                if leaves == 0 || degree < 2 {
                    return Err(PhaserError::BadShape { leaves, degree });
                }
                (leaves, degree)
            }
        };
        let core = Core::new(CoreConfig {
            leaves,
            degree,
            combiner,
            action: self.action,
            global,
        });
        Registration::create(core, mode)
    }
}
