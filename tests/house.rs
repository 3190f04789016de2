//! The house rules a reader relies on, checked: no source file over [`LONGEST`] lines (tests,
//! benchmarks, the simulator and the HTTP/2 client included) unless it says why at its top; a
//! module with children is `foo.rs` beside `foo/`, never `foo/mod.rs`; the README stays a user's
//! page under [`README_LONGEST`] lines, reference living in `docs/`; a public type's name is
//! defined once in the crate unless each definition says why it shares it ([`SAYS_WHY`]); every
//! line for a person on stderr, and every exit, is made by the one edge ([`EDGE`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most lines a Rust file may have: past it, a file holds more than one concern.
const LONGEST: usize = 500;
/// What a file that must be longer says in its first lines, followed by why.
const LONGER_BECAUSE: &str = "// Longer than 500 lines because";
/// The README is what, install, quick start, tour, configuration, commands.
const README_LONGEST: usize = 450;

/// The one file of the crate that writes lines for a person on stderr and ends the process.
const EDGE: &str = "src/cli/edge.rs";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under the folders the workspace's code lives in.
fn rust_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    for dir in ["src", "tests", "benches"] {
        walk(&root().join(dir), &mut found);
    }
    found.sort();
    found
}

fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn the_walk_finds_the_code_of_every_crate() {
    let files: Vec<String> = rust_files().iter().map(|p| shown(p)).collect();
    for expected in [
        "src/lib.rs",
        "src/sim/lib.rs",
        "src/h2/lib.rs",
        "tests/local.rs",
        "benches/floor.rs",
    ] {
        assert!(files.iter().any(|f| f == expected), "{expected} not walked");
    }
}

#[test]
fn no_source_file_is_over_500_lines_unless_it_says_why() {
    let mut long = Vec::new();
    for path in rust_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let lines = text.lines().count();
        let says_why = text
            .lines()
            .take(20)
            .any(|l| l.trim_start().starts_with(LONGER_BECAUSE));
        if lines > LONGEST && !says_why {
            long.push(format!("{} ({lines} lines)", shown(&path)));
        }
    }
    assert!(
        long.is_empty(),
        "split these by concern, or say at the top why one must be longer \
         (\"{LONGER_BECAUSE} ...\"): {long:?}"
    );
}

/// One module-file style: a module with children is `foo.rs` beside `foo/`, never `foo/mod.rs`
/// — in every crate of the workspace, its tests and benchmarks too.
#[test]
fn modules_with_children_are_files_beside_their_folders() {
    let found: Vec<String> = rust_files()
        .iter()
        .filter(|p| p.ends_with("mod.rs"))
        .map(|p| shown(p))
        .collect();
    assert!(found.is_empty(), "rename to foo.rs beside foo/: {found:?}");
}

#[test]
fn the_readme_stays_a_page_a_user_reads() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines < README_LONGEST,
        "README.md has {lines} lines (fewer than {README_LONGEST}): move reference to docs/"
    );
}

/// What each definition of a shared name says in its doc comment, followed by the other's path
/// and why.
const SAYS_WHY: &str = "Shares its name with";

/// One definition: the file, and whether its doc comment says why the name is shared.
struct Defined {
    file: String,
    says_why: bool,
}

/// Every `pub struct|enum|type|trait Name` at the start of a line (indented or not) of the
/// crate's own files, by name.
fn public_types() -> BTreeMap<String, Vec<Defined>> {
    let own = |p: &Path| {
        p.starts_with(root().join("src"))
            && !p.starts_with(root().join("src/sim"))
            && !p.starts_with(root().join("src/h2"))
    };
    let mut found: BTreeMap<String, Vec<Defined>> = BTreeMap::new();
    for path in rust_files().into_iter().filter(|p| own(p)) {
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            let Some(name) = defined_name(line) else {
                continue;
            };
            found.entry(name.to_string()).or_default().push(Defined {
                file: shown(&path),
                says_why: doc_above(&lines, at).contains(SAYS_WHY),
            });
        }
    }
    found
}

/// `Name` of `pub struct Name…`, `pub enum`, `pub type`, `pub trait` — seen by the whole
/// crate (`pub` or `pub(crate)`; a module's own `pub(super)` helpers aside), capitalised.
fn defined_name(line: &str) -> Option<&str> {
    let line = line.trim_start();
    let rest = line
        .strip_prefix("pub ")
        .or_else(|| line.strip_prefix("pub(crate) "))?;
    let rest = ["struct ", "enum ", "type ", "trait "]
        .iter()
        .find_map(|item| rest.strip_prefix(item))?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..end];
    name.starts_with(|c: char| c.is_ascii_uppercase())
        .then_some(name)
}

/// The `///` lines directly above line `at`, attributes (on one line or several) allowed
/// between, joined into one text.
fn doc_above(lines: &[&str], at: usize) -> String {
    let mut doc = Vec::new();
    let mut i = at;
    while i > 0 {
        i -= 1;
        let line = lines[i].trim();
        if let Some(text) = line.strip_prefix("///") {
            doc.push(text.trim());
        } else if line.starts_with("#[") {
            continue;
        } else if line.ends_with(']') {
            // The end of an attribute written on several lines: on past its `#[`.
            while i > 0 && !lines[i].trim().starts_with("#[") {
                i -= 1;
            }
        } else {
            break;
        }
    }
    doc.reverse();
    doc.join(" ")
}

#[test]
fn public_type_names_are_unique_or_say_why() {
    let types = public_types();
    assert!(
        types.get("Config").is_some_and(|d| d.len() == 1),
        "the walk finds `pub struct Config` in src/config.rs once"
    );
    let mut unexplained = Vec::new();
    for (name, defined) in types.iter().filter(|(_, d)| d.len() > 1) {
        if defined.iter().all(|d| d.says_why) {
            continue;
        }
        let files: Vec<String> = defined
            .iter()
            .map(|d| match d.says_why {
                true => d.file.clone(),
                false => format!("{} (says not why)", d.file),
            })
            .collect();
        unexplained.push(format!("{name}: {}", files.join(", ")));
    }
    assert!(
        unexplained.is_empty(),
        "name each idea apart, or say in every definition's doc comment \"{SAYS_WHY} `path`: \
         why\":\n{}",
        unexplained.join("\n")
    );
}

#[test]
fn a_doc_comment_says_why_through_attributes() {
    let lines = [
        "/// A thing.",
        "/// Shares its name with `a::Thing`: this one is on the wire.",
        "#[derive(Debug)]",
        "#[serde(",
        "    rename_all = \"camelCase\"",
        ")]",
        "pub struct Thing<'a> {",
    ];
    assert_eq!(defined_name(lines[6]), Some("Thing"));
    assert!(doc_above(&lines, 6).contains(SAYS_WHY));
    assert_eq!(defined_name("pub(crate) struct Crate;"), Some("Crate"));
    assert_eq!(defined_name("pub(super) struct Local;"), None);
    assert_eq!(defined_name("    pub enum Inner {"), Some("Inner"));
    assert_eq!(defined_name("pub fn not_a_type() {}"), None);
    let plain = ["/// A thing.", "// a comment between", "pub struct Thing;"];
    assert_eq!(doc_above(&plain, 2), "");
}

#[test]
fn only_the_edge_speaks_on_stderr_and_ends_the_process() {
    let own = |p: &Path| {
        p.starts_with(root().join("src"))
            && !p.starts_with(root().join("src/sim"))
            && !p.starts_with(root().join("src/h2"))
    };
    let mut speaking = Vec::new();
    for path in rust_files().into_iter().filter(|p| own(p)) {
        let text = std::fs::read_to_string(&path).unwrap();
        let said = ["eprintln!", "eprint!", "process::exit("]
            .iter()
            .any(|call| text.contains(call));
        if said {
            speaking.push(shown(&path));
        }
    }
    assert_eq!(
        speaking,
        [EDGE],
        "say it through the edge (cli/edge.rs), a seam's enum or an Edge's Said"
    );
}
