//! The house rules a reader relies on, checked: no source file over [`LONGEST`] lines (tests,
//! benchmarks, the simulator and the HTTP/2 client included) unless it says why at its top; a
//! module with children is `foo.rs` beside `foo/`, never `foo/mod.rs`; the README stays a user's
//! page under [`README_LONGEST`] lines, reference living in `docs/`.

use std::path::{Path, PathBuf};

/// The most lines a Rust file may have: past it, a file holds more than one concern.
const LONGEST: usize = 500;
/// What a file that must be longer says in its first lines, followed by why.
const LONGER_BECAUSE: &str = "// Longer than 500 lines because";
/// The README is what, install, quick start, tour, configuration, commands.
const README_LONGEST: usize = 450;

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
