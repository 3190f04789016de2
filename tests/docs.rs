//! The README and `docs/` say what is true: every link leads to a file (and heading) that exists,
//! every `fluxfleet …` command in a shell block is one the command line accepts, and every TOML
//! example reads without a warning; the floor table of docs/ARCHITECTURE.md is the crate's module
//! map, the README's contents are its sections, and the data-flow drawing shows every command.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::{Path, PathBuf};

use fluxfleet::cli::Cli;
use fluxfleet::config::Config;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page under docs/.
fn pages() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// The fenced blocks of a page with their language.
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(fence) = line.trim_start().strip_prefix("```") {
            match open.take() {
                Some(block) => out.push(block),
                None => open = Some((fence.trim().to_string(), String::new())),
            }
        } else if let Some((_, body)) = open.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// The text outside fenced blocks (where links are).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
        } else if !inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    prose(text)
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

/// `](target)` links of the prose.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        out.push(after[..end].to_string());
        rest = &after[end..];
    }
    out
}

#[test]
fn every_link_leads_to_a_file_and_heading_that_exist() {
    let mut wrong = Vec::new();
    for (page, text) in pages() {
        let dir = page.parent().unwrap();
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let (target, target_text) = if file.is_empty() {
                (page.clone(), text.clone())
            } else {
                let target = dir.join(file);
                if !target.exists() {
                    wrong.push(format!("{}: {link}: no such file", page.display()));
                    continue;
                }
                let target_text = std::fs::read_to_string(&target).unwrap_or_default();
                (target, target_text)
            };
            let is_markdown = target.extension().is_some_and(|e| e == "md");
            if !anchor.is_empty() && is_markdown && !anchors(&target_text).contains(&anchor.into())
            {
                wrong.push(format!("{}: {link}: no such heading", page.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// A shell line's words, with quotes as a shell reads them; None when it is not one command
/// (a pipe, a subshell) the check can read.
fn words(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                started = true;
                word.extend(chars.by_ref().take_while(|c| *c != '\''));
            }
            '"' => {
                started = true;
                word.extend(chars.by_ref().take_while(|c| *c != '"'));
            }
            c if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            '|' | '$' | '`' => return None,
            c => {
                started = true;
                word.push(c);
            }
        }
    }
    if started {
        out.push(word);
    }
    Some(out)
}

/// The `fluxfleet` commands of a shell block: comments, `&` and redirections left out;
/// `cargo run --release --` counts as `fluxfleet`.
fn commands(block: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    // A line ending in `\` goes on on the next.
    let joined = block.replace("\\\n", " ");
    for line in joined.lines() {
        let line = line.split(" #").next().unwrap_or(line).trim();
        let line = line.split(" > ").next().unwrap_or(line).trim();
        let line = line.trim_end_matches('&').trim();
        let line = line
            .strip_prefix("cargo run --release -- ")
            .map(|rest| format!("fluxfleet {rest}"))
            .unwrap_or_else(|| line.to_string());
        if !line.starts_with("fluxfleet") || line.contains('…') || line.contains('[') {
            // A synopsis (`[KIND] [NAME] …`) describes commands; it is not one.
            continue;
        }
        if let Some(words) = words(&line) {
            out.push((line.clone(), words));
        }
    }
    out
}

#[test]
fn every_documented_command_is_one_the_command_line_accepts() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (page, text) in pages() {
        for (lang, body) in blocks(&text) {
            if !matches!(lang.as_str(), "sh" | "bash" | "shell") {
                continue;
            }
            for (line, words) in commands(&body) {
                checked += 1;
                use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
                match Cli::parse_words(&words) {
                    Ok(_) => {}
                    // `--help` and `--version` are asked for, not wrong.
                    Err(e) if matches!(e.kind(), DisplayHelp | DisplayVersion) => {}
                    Err(e) => {
                        let first = e.to_string().lines().next().unwrap_or_default().to_string();
                        wrong.push(format!("{}: `{line}`: {first}", page.display()));
                    }
                }
            }
        }
    }
    assert!(
        checked >= 20,
        "only {checked} commands found: is the check reading the blocks?"
    );
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn every_documented_config_example_reads_without_a_warning() {
    let mut wrong = Vec::new();
    for (page, text) in pages() {
        for (lang, body) in blocks(&text) {
            if lang != "toml" {
                continue;
            }
            let (_, warnings) = Config::parse(Some(&body), Path::new(&page));
            if !warnings.is_empty() {
                wrong.push(format!("{}: {warnings:?}\n{body}", page.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// The checks themselves, on made-up pages: they must see what they exist to see.
#[test]
fn the_checks_see_a_broken_link_a_bad_command_and_a_synopsis() {
    assert_eq!(
        slug("Collectors: one collection for a team"),
        "collectors-one-collection-for-a-team"
    );
    assert_eq!(
        slug("`fluxfleet get` — the fleet"),
        "fluxfleet-get--the-fleet"
    );
    let page =
        "see [x](nope.md) and [y](#here)\n\n## Here\n\n```sh\nfluxfleet get --nope # c\n```\n";
    assert_eq!(links(page), ["nope.md", "#here"]);
    assert!(anchors(page).contains(&"here".to_string()));
    let block = &blocks(page)[0];
    assert_eq!(block.0, "sh");
    let found = commands(&block.1);
    assert_eq!(found[0].1, ["fluxfleet", "get", "--nope"]);
    assert!(Cli::parse_words(&found[0].1).is_err());
    assert!(commands("fluxfleet get [KIND] …\n").is_empty());
    assert_eq!(
        words("fluxfleet get --context 'prod-*' --reason \"a b\"").unwrap(),
        ["fluxfleet", "get", "--context", "prod-*", "--reason", "a b"]
    );
}

/// The modules of each floor of the crate doc's map (`src/lib.rs`), lowest first: each bullet's
/// names before its dash.
fn floors_of_the_map() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let mut floors: Vec<String> = Vec::new();
    for line in lib.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            break;
        };
        let doc = doc.trim_start();
        if let Some(bullet) = doc.strip_prefix("- ") {
            floors.push(bullet.to_string());
        } else if doc.is_empty() {
            floors.push(String::new());
        } else if let Some(last) = floors.last_mut().filter(|l| !l.is_empty()) {
            last.push(' ');
            last.push_str(doc);
        }
    }
    floors
        .iter()
        .filter(|f| !f.is_empty())
        .filter_map(|f| f.split(" — ").next().map(names))
        .filter(|n| !n.is_empty())
        .collect()
}

/// The names written `like this` in `text`, in order.
fn names(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The floor table of docs/ARCHITECTURE.md is the crate doc's map: the same modules on the same
/// floors, in the same order.
#[test]
fn the_floor_table_is_the_module_map() {
    let map = floors_of_the_map();
    assert!(map.len() >= 10, "the map was not read: {map:?}");
    assert!(map[0].contains(&"units".to_string()), "{map:?}");
    let page = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let table: Vec<Vec<String>> = page
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|row| {
            let mut cells = row.split(" | ");
            let floor = cells.next()?;
            floor.parse::<usize>().ok()?;
            Some(names(cells.next()?))
        })
        .collect();
    assert_eq!(
        table, map,
        "docs/ARCHITECTURE.md's floor table and src/lib.rs's map differ"
    );
    // Every module of the crate is on a floor.
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    for module in lib.lines().filter_map(|l| {
        l.trim()
            .strip_prefix("pub mod")
            .or_else(|| l.trim().strip_prefix("mod"))
    }) {
        let module = module.trim().trim_end_matches(';');
        assert!(
            map.iter().flatten().any(|m| m == module),
            "{module} is on no floor of the map"
        );
    }
}

/// The README's contents list is its sections, in order.
#[test]
fn the_readmes_contents_are_its_sections() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let listed: Vec<String> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("- [")?.split_once("](#"))
        .map(|(title, _)| title.to_string())
        .collect();
    let sections: Vec<String> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::to_string)
        .collect();
    assert_eq!(listed, sections);
}

/// The data-flow drawing in docs/ARCHITECTURE.md shows every command.
#[test]
fn the_data_flow_drawing_has_every_command() {
    use clap::CommandFactory;
    let page = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let (_, after) = page.split_once("## The data flow").unwrap();
    let drawing = &blocks(after)[0].1;
    for sub in Cli::command().get_subcommands() {
        let name = sub.get_name();
        if name == "completions" {
            continue;
        }
        assert!(
            drawing.contains(name),
            "the data-flow drawing does not show `{name}`"
        );
    }
}
