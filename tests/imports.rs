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

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every source file of a library, by module path (`src/a/b.rs` and `src/a/b/mod.rs` are
/// `a::b`; `src/lib.rs` is the root). `main.rs` is the binary, outside the library; a folder with
/// a `Cargo.toml` of its own is another crate.
fn files(src: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Module, PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                if !path.join("Cargo.toml").exists() {
                    walk(&path, src, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("main.rs") {
                let rel = path.strip_prefix(src).unwrap().with_extension("");
                let mut module: Module = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                    module.pop();
                }
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The code of a file: comments, string and character literals blanked, and its `#[cfg(test)]
/// mod tests { … }` block left out (a test module imports what it tests, from below).
fn code(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if let Some((body, hashes)) = raw_string_start(rest)
            .filter(|_| i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let close = format!("\"{}", "#".repeat(hashes));
            i += rest[body..]
                .find(&close)
                .map_or(rest.len(), |e| body + e + close.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && char_literal_len(rest).is_some() {
            i += char_literal_len(rest).unwrap();
            out.push_str("' '");
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    without_test_module(&out)
}

/// `r"`, `r#"`, `br##"` …: where the string's text starts, and how many `#` close it.
fn raw_string_start(rest: &str) -> Option<(usize, usize)> {
    let r = rest.strip_prefix('b').unwrap_or(rest).strip_prefix('r')?;
    let hashes = r.len() - r.trim_start_matches('#').len();
    let prefix = rest.len() - r.len();
    r[hashes..]
        .starts_with('"')
        .then_some((prefix + hashes + 1, hashes))
}

/// `'x'`, `'\n'`, `'\u{1F600}'` (not a lifetime).
fn char_literal_len(rest: &str) -> Option<usize> {
    let mut chars = rest.char_indices().skip(1);
    let (_, c) = chars.next()?;
    if c == '\\' {
        // The escaped character, then up to the closing quote (`'\''`, `'\u{1F600}'`).
        return rest.get(3..)?.find('\'').map(|e| e + 4);
    }
    let (at, close) = chars.next()?;
    (close == '\'').then_some(at + 1)
}

fn without_test_module(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let after = &out[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        if !trimmed.starts_with("mod tests") {
            // Another cfg(test) item: keep it, look further.
            let keep = out[..at + 1].to_string();
            return keep + &without_test_module(&out[at + 1..]);
        }
        let start = at;
        let open = out.len() - trimmed.len() + trimmed.find(['{', ';']).unwrap();
        let end = if out.as_bytes()[open] == b';' {
            open + 1
        } else {
            let mut depth = 0;
            let mut end = out.len();
            for (i, c) in out[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            end
        };
        out.replace_range(start..end, "");
    }
    out
}

/// Every path of the crate a file names: `use` trees expanded, then inline paths.
fn paths(code: &str) -> Vec<Vec<String>> {
    paths_with(code, &[])
}

/// [`paths`], and the paths that start with one of `children` (the file's own child modules),
/// as `self::…`.
fn paths_with(code: &str, children: &[String]) -> Vec<Vec<String>> {
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
fn bindings(code: &str, module: &Module, children: &[String]) -> BTreeMap<String, Module> {
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
fn expand(tree: &str, prefix: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
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
type Bindings = BTreeMap<Module, BTreeMap<String, Module>>;

/// The file a path names, from the file of `module`, following what files only bind (their
/// `use`s) to the file that defines it.
fn resolve(
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

/// The floors of the module map: for each bullet, the modules named (in backquotes) before its
/// first ` — `.
fn floors(lib: &str) -> BTreeMap<String, usize> {
    let mut floors = BTreeMap::new();
    // A bullet and the lines that continue it (indented), up to the next bullet or paragraph.
    let mut bullets: Vec<String> = Vec::new();
    let mut open = false;
    for doc in lib.lines().map_while(|l| l.strip_prefix("//!")) {
        if let Some(bullet) = doc.strip_prefix(" - ") {
            bullets.push(bullet.to_string());
            open = true;
        } else if let Some(more) = doc.strip_prefix("   ").filter(|_| open) {
            if let Some(last) = bullets.last_mut() {
                last.push(' ');
                last.push_str(more);
            }
        } else {
            open = false;
        }
    }
    for (floor, line) in bullets.iter().enumerate() {
        let head = line.split(" — ").next().unwrap_or(line);
        // Every name in backquotes, linked or not (`hostile` exists only under test).
        for name in head.split('`').skip(1).step_by(2) {
            floors.insert(name.to_string(), floor);
        }
    }
    floors
}

fn name(module: &Module) -> String {
    if module.is_empty() {
        "crate".into()
    } else {
        module.join("::")
    }
}

#[test]
fn every_import_goes_down_the_module_map_and_no_files_import_each_other() {
    let wrong = check("src");
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// The simulator is a crate of its own, with its own module map.
#[test]
fn the_simulator_keeps_its_own_module_map() {
    let wrong = check("src/sim");
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    let sim = files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim"));
    assert!(sim.contains_key(&vec!["facts".to_string()]), "{sim:?}");
}

/// What is wrong with the imports of the crate whose `lib.rs` is in `dir`.
fn check(dir: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join(dir);
    let files = files(&src);
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let floors = floors(&lib);
    let mut wrong = Vec::new();

    let children = |module: &Module| -> Vec<String> {
        files
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .filter_map(|m| m.last().cloned())
            .collect()
    };
    let codes: BTreeMap<&Module, String> = files
        .iter()
        .map(|(m, path)| (m, code(&std::fs::read_to_string(path).unwrap())))
        .collect();
    let bound: Bindings = codes
        .iter()
        .map(|(m, code)| ((*m).clone(), bindings(code, m, &children(m))))
        .collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    // Why each edge is there: the first path that made it, for the message.
    let mut because: BTreeMap<(Module, Module), String> = BTreeMap::new();
    for (module, code) in &codes {
        let root_declares = module.is_empty();
        let to = edges.entry((*module).clone()).or_default();
        for p in paths_with(code, &children(module)) {
            let Some(target) = resolve(&p, module, &files, &bound) else {
                continue;
            };
            if target != **module && !root_declares {
                because
                    .entry(((*module).clone(), target.clone()))
                    .or_insert_with(|| p.join("::"));
                to.insert(target);
            }
        }
    }

    // Layers: a top-level module imports only from its floor or below.
    for module in files.keys().filter(|m| !m.is_empty()) {
        if !floors.contains_key(&module[0]) {
            wrong.push(format!(
                "module {} is not in the module map of {dir}/lib.rs",
                module[0]
            ));
        }
    }
    wrong.dedup();
    for (from, tos) in &edges {
        let (Some(top), Some(&floor)) = (from.first(), from.first().and_then(|t| floors.get(t)))
        else {
            continue;
        };
        for to in tos {
            let Some(other) = to.first() else { continue };
            if other != top
                && let Some(&up) = floors.get(other)
                && up > floor
            {
                wrong.push(format!(
                    "{} imports {} from a higher floor of the module map ({other} is above {top})",
                    files[from]
                        .strip_prefix(root)
                        .unwrap_or(&files[from])
                        .display(),
                    name(to)
                ));
            }
        }
    }

    // Circles between files (strongly connected components, Tarjan's algorithm).
    for circle in circles(&edges) {
        let names: Vec<String> = circle
            .iter()
            .map(|m| {
                files[m]
                    .strip_prefix(root)
                    .unwrap_or(&files[m])
                    .display()
                    .to_string()
            })
            .collect();
        let ties: Vec<String> = circle
            .iter()
            .flat_map(|from| {
                let because = &because;
                circle.iter().filter_map(move |to| {
                    because
                        .get(&(from.clone(), to.clone()))
                        .map(|p| format!("{} → {} ({p})", name(from), name(to)))
                })
            })
            .collect();
        wrong.push(format!(
            "these files import each other: {}\n    {}",
            names.join(", "),
            ties.join("\n    ")
        ));
    }
    wrong
}

fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Tarjan<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        found: Vec<Vec<Module>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a Module) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.found
}

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
}

/// One module-file style: a module with children is `foo.rs` beside `foo/`, never `foo/mod.rs`
/// — in every crate of the workspace (the simulator and the HTTP/2 client too).
#[test]
fn modules_with_children_are_files_beside_their_folders() {
    fn walk(dir: &Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.ends_with("mod.rs") {
                found.push(path.display().to_string());
            }
        }
    }
    let mut found = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut found,
    );
    assert!(found.is_empty(), "rename to foo.rs beside foo/: {found:?}");
}
