//! The module map in the crate doc (`src/lib.rs`) is the law of imports: every file-level import
//! goes to the file's own module or down to a module on the same or a lower floor of the map, and
//! no files import each other, directly or round a circle. A split that leaves its shared types
//! behind fails here, naming the files.
//!
//! An import is a path that starts with `crate::`, `super::` or `self::`, or with the name of one
//! of the file's own child modules (`pub use act::Order;`, `act::run(…)`), in a `use` tree or
//! inline, resolved to the longest prefix that is a file. A parent that re-exports or calls a
//! child imports it: a child that also imports its parent is a circle, and what both need goes
//! down a floor. Only the crate root (`lib.rs`) declares its children without importing them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod paths;
mod rules;
mod self_check;
mod source;

/// A module's path from its crate's root, one segment each (`["app", "rows"]`; the root is empty).
type Module = Vec<String>;
