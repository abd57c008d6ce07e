//! Creating phasers: shape (tree or flat), phase action, accumulation.

use crate::accum::{combiner, AccumOp, AccumValue};
use crate::core::{Action, Core, CoreConfig};
use crate::global::GlobalStage;
use crate::mode::{Mode, PhaserError};
use crate::registration::Registration;
use crate::tree::Combiner;
use std::sync::Arc;

/// Default fan-in of the phaser tree.
pub const DEFAULT_DEGREE: usize = 4;
/// Default number of leaf sub-phasers.
pub const DEFAULT_LEAVES: usize = 4;

/// Entry point: [`Phaser::new`] for a default phaser, [`Phaser::builder`]
/// to choose its shape, a phase action or an accumulation.
#[derive(Debug)]
pub struct Phaser;

impl Phaser {
    /// A tree phaser with the default shape; the calling task is registered
    /// in `mode` (HC's `phaser_create`), and leaves when the returned
    /// registration is dropped.
    // `Phaser` is only a namespace: creating a phaser hands back the
    // creator's registration, the one handle that can use it.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(mode: Mode) -> Registration<()> {
        Phaser::builder()
            .build(mode)
            .expect("a new phaser always has room for its creator")
    }

    /// A builder.
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
    pub fn flat(mut self) -> Self {
        self.shape = Shape::Flat;
        self
    }

    /// A tree of `leaves` leaf sub-phasers and inner fan-in `degree`.
    pub fn tree(mut self, leaves: usize, degree: usize) -> Self {
        self.shape = Shape::Tree { leaves, degree };
        self
    }

    /// Sets the shape.
    pub fn shape(mut self, shape: Shape) -> Self {
        self.shape = shape;
        self
    }

    /// A single-task phase action: `action(phase)` runs once per phase, on
    /// the thread that completes it, after every signal of the phase and
    /// before any waiter leaves it. A panic in it fails the phaser.
    pub fn phase_action(mut self, action: impl FnMut(u64) + Send + 'static) -> Self {
        self.action = Some(Box::new(action));
        self
    }

    /// Creates a barrier phaser and registers the caller in `mode`.
    ///
    /// # Errors
    /// [`PhaserError::Config`] for a tree with no leaf or degree < 2.
    pub fn build(self, mode: Mode) -> Result<Registration<()>, PhaserError> {
        self.create(None, None, mode)
    }

    /// Creates an accumulator (an intra-node `accum`) reducing `V` with `op`
    /// and registers the caller in `mode`.
    ///
    /// # Errors
    /// [`PhaserError::UnsupportedOp`] (bitwise or logical `op` on floats),
    /// or as [`build`](Self::build).
    pub fn build_accum<V: AccumValue>(
        self,
        op: AccumOp,
        mode: Mode,
    ) -> Result<Registration<V>, PhaserError> {
        let combiner = combiner::<V>(op)?;
        self.create(Some(combiner), None, mode)
    }

    pub(crate) fn create<V>(
        self,
        combiner: Option<Combiner>,
        global: Option<Box<dyn GlobalStage>>,
        mode: Mode,
    ) -> Result<Registration<V>, PhaserError> {
        let (leaves, degree) = match self.shape {
            Shape::Flat => (1, 2),
            Shape::Tree { leaves, degree } => {
                if leaves == 0 || degree < 2 {
                    return Err(PhaserError::Config(format!(
                        "a phaser tree needs at least one leaf and degree >= 2 (got {leaves} leaves, degree {degree})"
                    )));
                }
                (leaves, degree)
            }
        };
        let core = Arc::new(Core::new(CoreConfig {
            leaves,
            degree,
            combiner,
            action: self.action,
            global,
        }));
        Registration::create(core, mode)
    }
}
