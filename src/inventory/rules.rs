//! Context globs and the workspace and label rules of the config file.

use std::collections::BTreeMap;

use regex::Regex;

use crate::glob::glob_match;

use crate::config::{LabelRule, WorkspaceRule};

/// The workspace and label rules, compiled once. Rules that do not compile become problems,
/// not panics.
pub struct CompiledRules {
    workspaces: Vec<Workspace>,
    labels: Vec<Labels>,
}

enum Workspace {
    Globs { name: String, globs: Vec<String> },
    Regex(Regex),
}

struct Labels {
    globs: Vec<String>,
    regex: Option<Regex>,
    set: BTreeMap<String, String>,
}

impl CompiledRules {
    /// Compiles the rules; the second value lists every rule that cannot be used and why.
    pub fn compile(
        workspaces: &[WorkspaceRule],
        labels: &[LabelRule],
    ) -> (CompiledRules, Vec<String>) {
        let mut problems = Vec::new();
        let mut ws = Vec::new();
        for (i, rule) in workspaces.iter().enumerate() {
            let at = format!("workspaces[{i}]");
            match (&rule.name, &rule.regex) {
                (Some(name), None) if !rule.contexts.is_empty() => ws.push(Workspace::Globs {
                    name: name.clone(),
                    globs: rule.contexts.clone(),
                }),
                (None, Some(re)) if rule.contexts.is_empty() => match Regex::new(re) {
                    Ok(re) if re.captures_len() > 1 => ws.push(Workspace::Regex(re)),
                    Ok(_) => problems.push(format!(
                        "{at}: regex {re:?} has no capture group for the workspace name"
                    )),
                    Err(e) => problems.push(format!("{at}: invalid regex: {e}")),
                },
                _ => problems.push(format!(
                    "{at}: give either `name` and `contexts`, or `regex` with a capture group"
                )),
            }
        }
        let mut ls = Vec::new();
        for (i, rule) in labels.iter().enumerate() {
            let regex = match rule.regex.as_deref().map(Regex::new).transpose() {
                Ok(re) => re,
                Err(e) => {
                    problems.push(format!("labels[{i}]: invalid regex: {e}"));
                    continue;
                }
            };
            if rule.contexts.is_empty() && regex.is_none() {
                problems.push(format!("labels[{i}]: give `contexts` or `regex`"));
                continue;
            }
            ls.push(Labels {
                globs: rule.contexts.clone(),
                regex,
                set: rule.set.clone(),
            });
        }
        (
            CompiledRules {
                workspaces: ws,
                labels: ls,
            },
            problems,
        )
    }

    /// The workspace an explicit rule gives this context, if any (first match wins).
    pub fn workspace(&self, context: &str) -> Option<String> {
        self.workspaces.iter().find_map(|rule| match rule {
            Workspace::Globs { name, globs } => globs
                .iter()
                .any(|g| glob_match(g, context))
                .then(|| name.clone()),
            Workspace::Regex(re) => re
                .captures(context)?
                .iter()
                .skip(1)
                .flatten()
                .next()
                .map(|m| m.as_str().to_string())
                .filter(|s| !s.is_empty()),
        })
    }

    /// The labels every matching rule gives this context; later rules win on the same key.
    pub fn labels(&self, context: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for rule in &self.labels {
            let by_glob = rule.globs.iter().any(|g| glob_match(g, context));
            let captures = rule.regex.as_ref().and_then(|re| re.captures(context));
            if !by_glob && captures.is_none() {
                continue;
            }
            out.extend(rule.set.clone());
            if let (Some(re), Some(caps)) = (&rule.regex, captures) {
                for name in re.capture_names().flatten() {
                    if let Some(m) = caps.name(name) {
                        out.insert(name.to_string(), m.as_str().to_string());
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_rules_first_match_wins_and_bad_rules_are_reported() {
        let rules = [
            WorkspaceRule {
                name: Some("payments".into()),
                contexts: vec!["pay-*".into()],
                regex: None,
            },
            WorkspaceRule {
                name: None,
                contexts: vec![],
                regex: Some("^([a-z]+)-(dev|prod)-".into()),
            },
            WorkspaceRule {
                name: None,
                contexts: vec![],
                regex: Some("^[a-z]+$".into()),
            },
            WorkspaceRule {
                name: None,
                contexts: vec![],
                regex: Some("(".into()),
            },
        ];
        let (rules, problems) = CompiledRules::compile(&rules, &[]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("workspaces[2]: regex"));
        assert!(problems[1].starts_with("workspaces[3]: invalid regex"));
        assert_eq!(rules.workspace("pay-prod-1").as_deref(), Some("payments"));
        assert_eq!(rules.workspace("retail-dev-7").as_deref(), Some("retail"));
        assert_eq!(rules.workspace("kind-local"), None);
    }

    #[test]
    fn labels_accumulate_from_sets_and_named_captures() {
        let rules = [
            LabelRule {
                contexts: vec!["*-prod-*".into()],
                regex: None,
                set: [("tier".to_string(), "critical".to_string())].into(),
            },
            LabelRule {
                contexts: vec![],
                regex: Some("^[a-z]+-(?P<env>dev|prod)-(?P<region>[a-z0-9]+)$".into()),
                set: BTreeMap::new(),
            },
        ];
        let (rules, problems) = CompiledRules::compile(&[], &rules);
        assert_eq!(problems, Vec::<String>::new());
        let labels = rules.labels("pay-prod-eu1");
        assert_eq!(labels["tier"], "critical");
        assert_eq!(labels["env"], "prod");
        assert_eq!(labels["region"], "eu1");
        assert!(rules.labels("local").is_empty());
    }
}
