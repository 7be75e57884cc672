//! The a6xx PM4 command processor.

pub mod packet;
pub mod processor;
pub mod state;

pub use packet::{Header, HeaderError, decode_header, parity, type4, type7};
pub use processor::{
    CommandProcessor, ComputeCause, ComputeError, ComputeUnit, CpError, CpErrorKind, RunOutcome,
    Submission,
};
pub use state::{CsDispatch, LoadedState, Registers};
