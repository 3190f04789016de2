//! The check on made-up files: it sees grouped imports, a circle and a floor crossed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::Module;
use super::paths::{Bindings, bindings, expand, paths, paths_with, resolve};
use super::rules::{apart, circles, floors};
use super::source::code;

/// The check itself, on made-up files: it must see what it exists to see.
#[test]
fn the_check_sees_grouped_imports_a_circle_and_a_floor_crossed() {
    let tree = "super::{a::X as Z, b::{self, Y}, c::*}";
    let mut out = Vec::new();
    expand(tree, Vec::new(), &mut out);
    let v = |p: &str| -> Vec<String> { p.split("::").map(str::to_string).collect() };
    assert!(
        out.contains(&(v("super::a::X"), Some("Z".into()))),
        "{out:?}"
    );
    assert!(
        out.contains(&(v("super::b::Y"), Some("Y".into()))),
        "{out:?}"
    );
    assert!(out.contains(&(v("super::b"), Some("b".into()))), "{out:?}");
    assert!(out.contains(&(v("super::c"), None)), "{out:?}");
    let text = "use super::{a::X, b};\nfn f() { let s = \"crate::nope\"; crate::fleet::g(); }\n\
                // super::comment\n#[cfg(test)]\nmod tests { use crate::app::Y; }\n";
    let found = paths(&code(text));
    // Quotes inside literals hide nothing that follows them.
    let tricky = "let q = '\\''; let r = br#\"crate::nope\"#; let s = r\"x\"; crate::fleet::h();\n";
    let after: Vec<String> = paths(&code(tricky)).iter().map(|p| p.join("::")).collect();
    assert_eq!(after, ["crate::fleet::h"], "{tricky}");
    let joined: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert!(joined.contains(&"super::a::X".to_string()), "{joined:?}");
    assert!(
        joined.contains(&"crate::fleet::g".to_string()),
        "{joined:?}"
    );
    assert!(
        !joined
            .iter()
            .any(|p| p.contains("nope") || p.contains("comment") || p.contains("app")),
        "{joined:?}"
    );

    let m = |s: &str| -> Module { s.split("::").map(str::to_string).collect() };
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    edges
        .entry(m("app::rows"))
        .or_default()
        .insert(m("app::triage"));
    edges
        .entry(m("app::triage"))
        .or_default()
        .insert(m("app::rows"));
    edges.entry(m("app::view")).or_default();
    assert_eq!(
        circles(&edges),
        vec![vec![m("app::rows"), m("app::triage")]]
    );

    // A parent that re-exports or calls its child, and a child that imports its parent.
    let children = ["act".to_string()];
    let parent = "mod act;\npub use act::Order;\nfn f() { act::run(); http::get(); }\n";
    let named: Vec<String> = paths_with(&code(parent), &children)
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(named, ["self::act::Order", "self::act::run"], "{parent}");
    // A name the parent only re-exports leads to the child that defines it; one it defines
    // stays the parent's.
    let files: BTreeMap<Module, PathBuf> = ["", "p", "p::a", "p::b"]
        .iter()
        .map(|f| {
            (
                m(f).into_iter().filter(|s| !s.is_empty()).collect(),
                PathBuf::new(),
            )
        })
        .collect();
    let mut bound = Bindings::new();
    let in_p = bindings(
        "pub use a::X;\nuse crate::q::Y as Z;\n",
        &m("p"),
        &["a".into()],
    );
    bound.insert(m("p"), in_p);
    let from_b = |path: &str| resolve(&m(path), &m("p::b"), &files, &bound);
    assert_eq!(from_b("super::X"), Some(m("p::a")));
    assert_eq!(from_b("super::helper"), Some(m("p")));
    assert_eq!(from_b("crate::p::X"), Some(m("p::a")));

    let lib = "//! - [`units`], `glob` (tests) — leaves\n//! - [`fleet`] — uses [`units`]\n";
    let floors = floors(lib);
    assert_eq!(floors["units"], 0);
    assert_eq!(floors["fleet"], 1);
    assert_eq!(floors.len(), 3);
    let lib = "//! - [`export`] — reads\n//! - [`acting`], `x` — writes; it imports nothing of\n//!   [`export`].\n";
    assert_eq!(
        apart(lib),
        [
            ("acting".into(), "export".into()),
            ("x".into(), "export".into())
        ]
    );
}
