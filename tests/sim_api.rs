//! Conformance of the simulated API server, driven by kube-rs over real HTTPS.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::time::Duration;

use common::*;
use futures::StreamExt;
use kube::api::{ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use kube::core::{ApiResource, DynamicObject};
use serde_json::json;

mod discovery;
mod requests;
mod side_by_side;
mod watch;
