//! The rules: every import goes down the module map of `lib.rs`, and no files import each other,
//! directly or round a circle — in the crate and in the simulator.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::Module;
use super::paths::{Bindings, bindings, paths_with, resolve};
use super::source::{code, files};

/// The bullets of the module map, each with the lines that continue it (indented), up to the
/// next bullet or paragraph.
fn bullets(lib: &str) -> Vec<String> {
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
    bullets
}

/// The modules a bullet names (in backquotes, linked or not: `hostile` exists only under test)
/// before its first ` — `.
fn heads(bullet: &str) -> impl Iterator<Item = &str> {
    let head = bullet.split(" — ").next().unwrap_or(bullet);
    head.split('`').skip(1).step_by(2)
}

/// The floors of the module map: for each bullet, the modules it names.
pub(super) fn floors(lib: &str) -> BTreeMap<String, usize> {
    let mut floors = BTreeMap::new();
    for (floor, bullet) in bullets(lib).iter().enumerate() {
        for name in heads(bullet) {
            floors.insert(name.to_string(), floor);
        }
    }
    floors
}

/// What the module map says a bullet's modules never import, though it is below them: each
/// "imports nothing of [`X`]" in the bullet, as (a module it names, X).
pub(super) fn apart(lib: &str) -> Vec<(String, String)> {
    const SAYS: &str = "imports nothing of [`";
    let mut apart = Vec::new();
    for bullet in bullets(lib) {
        for said in bullet.split(SAYS).skip(1) {
            let Some((other, _)) = said.split_once('`') else {
                continue;
            };
            apart.extend(heads(&bullet).map(|m| (m.to_string(), other.to_string())));
        }
    }
    apart
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
    // Modules the map says stay apart, though one is below the other.
    for (module, other) in apart(&lib) {
        for (from, tos) in edges
            .iter()
            .filter(|(from, _)| from.first() == Some(&module))
        {
            for to in tos.iter().filter(|to| to.first() == Some(&other)) {
                wrong.push(format!(
                    "{} imports {}: the module map says {module} imports nothing of {other}",
                    files[from]
                        .strip_prefix(root)
                        .unwrap_or(&files[from])
                        .display(),
                    name(to)
                ));
            }
        }
    }
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

pub(super) fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
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
