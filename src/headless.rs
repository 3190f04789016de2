//! What every headless command shares, below both the reads ([`crate::export`]) and the writes
//! ([`crate::acting`]): what it tells a person on the way ([`Edge`], [`Said`]), how it opens the
//! fleet ([`opening`]) and why that fails ([`OpenFailed`]), and how it writes its output
//! ([`Output`], [`table`], [`writing`]). The edge (`cli`) makes every line on stderr and the
//! exit code.

pub mod opening;
pub mod table;
mod telling;
pub mod writing;

pub use opening::OpenFailed;
pub use telling::{Confirm, Confirmed, Edge, NotLive, Said};
pub use writing::Output;
