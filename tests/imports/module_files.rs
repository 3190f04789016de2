//! One module-file style in every crate of the workspace: `foo.rs` beside `foo/`, never
//! `foo/mod.rs`.

use std::path::Path;

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
