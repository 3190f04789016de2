//! What a file's code names: the paths of its `use` trees and inline, the names it binds, and
//! the file each path leads to.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::Module;

/// Every path of the crate a file names: `use` trees expanded, then inline paths.
pub(super) fn paths(code: &str) -> Vec<Vec<String>> {
    paths_with(code, &[])
}

/// [`paths`], and the paths that start with one of `children` (the file's own child modules),
/// as `self::…`.
pub(super) fn paths_with(code: &str, children: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    let mut inline = String::new();
    while let Some(at) = find_use(rest) {
        inline.push_str(&rest[..at]);
        let tree_end = rest[at..].find(';').map_or(rest.len(), |e| at + e);
        let mut trees = Vec::new();
        expand(&rest[at + 4..tree_end], Vec::new(), &mut trees);
        out.extend(trees.into_iter().map(|(path, _)| path));
        rest = &rest[tree_end..];
    }
    inline.push_str(rest);
    let b = inline.as_bytes();
    let starts: Vec<String> = ["crate", "super", "self"]
        .iter()
        .map(|s| s.to_string())
        .chain(children.iter().cloned())
        .map(|s| s + "::")
        .collect();
    for start in &starts {
        let start = start.as_str();
        let mut from = 0;
        while let Some(at) = inline[from..].find(start).map(|i| from + i) {
            from = at + start.len();
            if at > 0
                && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_' || b[at - 1] == b':')
            {
                continue;
            }
            // A visibility (`pub(in crate::k8s)`) names where an item is seen, not an import.
            if inline[..at].trim_end().ends_with("(in") {
                continue;
            }
            let end = inline[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(inline.len(), |e| at + e);
            let path: Vec<String> = inline[at..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            out.push(path);
        }
    }
    // A child named first is the file's own: `self::child::…`.
    for path in &mut out {
        if path.first().is_some_and(|p| children.contains(p)) {
            path.insert(0, "self".into());
        }
    }
    out.retain(|p| {
        matches!(
            p.first().map(String::as_str),
            Some("crate" | "super" | "self")
        )
    });
    out
}

/// The names a file's `use` trees bind (relative to `module`; `children` are its child modules),
/// each with where it leads from the crate root.
pub(super) fn bindings(
    code: &str,
    module: &Module,
    children: &[String],
) -> BTreeMap<String, Module> {
    let mut out = BTreeMap::new();
    let mut rest = code;
    while let Some(at) = find_use(rest) {
        let tree_end = rest[at..].find(';').map_or(rest.len(), |e| at + e);
        let mut trees = Vec::new();
        expand(&rest[at + 4..tree_end], Vec::new(), &mut trees);
        for (mut path, name) in trees {
            let Some(name) = name else { continue };
            match path.first().map(String::as_str) {
                Some("crate" | "super" | "self") => {}
                Some(first) if children.iter().any(|c| c == first) => {
                    path.insert(0, "self".into());
                }
                // Another crate's.
                _ => continue,
            }
            out.insert(name, absolute(&path, module));
        }
        rest = &rest[tree_end..];
    }
    out
}

/// The next `use` keyword (`use` or `pub … use`) at a word boundary.
fn find_use(code: &str) -> Option<usize> {
    let b = code.as_bytes();
    let mut from = 0;
    while let Some(at) = code[from..].find("use ").map(|i| from + i) {
        from = at + 4;
        let before = at.checked_sub(1).map(|i| b[i]);
        if before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == b'_')) {
            return Some(at);
        }
    }
    None
}

/// `a::{b, c::{d, e}}` into `a::b`, `a::c::d`, `a::c::e` (after `prefix`), each with the name it
/// binds (`x as y` binds y; `a::{self}` binds a; a glob binds none).
pub(super) fn expand(
    tree: &str,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    if let Some(open) = tree.find('{') {
        let mut head = prefix;
        head.extend(
            tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        );
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut depth = 0;
        let mut last = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[last..i], head.clone(), out);
                    last = i + 1;
                }
                _ => {}
            }
        }
        expand(&inner[last..], head, out);
        return;
    }
    // `x as y` names x and binds y.
    let mut words = tree.split_whitespace();
    let leaf = words.next().unwrap_or_default();
    let alias = match (words.next(), words.next()) {
        (Some("as"), Some(alias)) => Some(alias.to_string()),
        _ => None,
    };
    let mut path = prefix;
    path.extend(
        leaf.split("::")
            .filter(|s| !s.is_empty() && *s != "*")
            .map(str::to_string),
    );
    let glob = leaf.ends_with('*');
    if path.last().is_some_and(|l| l == "self") {
        path.pop();
    }
    let bound = match glob {
        true => None,
        false => alias.or_else(|| path.last().cloned()),
    };
    if !path.is_empty() {
        out.push((path, bound.filter(|b| b != "_")));
    }
}

/// Where a path leads from `module`, as segments from the crate root (`self` is the module, each
/// `super` one up).
fn absolute(path: &[String], module: &Module) -> Module {
    let mut parts = path.to_vec();
    let mut base: Module = module.clone();
    match parts.first().map(String::as_str) {
        Some("crate") => base.clear(),
        Some("self") => {}
        _ => {
            while parts.first().is_some_and(|p| p == "super") {
                parts.remove(0);
                base.pop();
            }
        }
    }
    // `self` inside a group (`use super::x::{self, Y}`) names the module itself.
    parts.retain(|p| p != "self" && p != "crate" && p != "super");
    base.extend(parts);
    base
}

/// What each file binds with `use`: name → where it leads (from the crate root). A path that
/// reaches a file and names something it only binds (`pub use child::X`, or a private `use`,
/// which children see too) leads on to where that is.
pub(super) type Bindings = BTreeMap<Module, BTreeMap<String, Module>>;

/// The file a path names, from the file of `module`, following what files only bind (their
/// `use`s) to the file that defines it.
pub(super) fn resolve(
    path: &[String],
    module: &Module,
    files: &BTreeMap<Module, PathBuf>,
    bindings: &Bindings,
) -> Option<Module> {
    let mut at = absolute(path, module);
    for _ in 0..16 {
        let file = (0..=at.len())
            .rev()
            .map(|n| at[..n].to_vec())
            .find(|m| files.contains_key(m))?;
        let Some(name) = at.get(file.len()) else {
            return Some(file);
        };
        match bindings.get(&file).and_then(|b| b.get(name)) {
            Some(target) if !target.starts_with(&at[..=file.len()]) => {
                let mut next = target.clone();
                next.extend_from_slice(&at[file.len() + 1..]);
                at = next;
            }
            _ => return Some(file),
        }
    }
    None
}
