//! The commands typed after `:`, as k9s users type them: their names and aliases in one table
//! (which completion offers too), parsed into [`Command`].

use crate::fleet::FluxKind;
use crate::fleet::verbs::Verb;

/// One command.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Quit,
    Help,
    /// Back to the fleet view.
    Fleet,
    /// Every object in scope.
    All,
    Triage,
    /// The rollout view of one kind, or of every followed kind.
    Rollout(Option<FluxKind>),
    /// Same revision, different result: the copies off their revision's norm.
    Drift,
    /// Mark every object row the view shows.
    Mark,
    /// Mark the stuck clusters' objects of the rows shown (rollout view, matrix).
    MarkStuck,
    Unmark,
    Results,
    Audit,
    /// What assistants proposed, for a person to approve or reject.
    Proposals,
    /// Reject the selected proposal, saying why.
    Reject(String),
    /// What changed in scope during this last while (the collectors' history).
    History(std::time::Duration),
    Act(Verb),
    Workspace(String),
    Cluster(String),
    /// The objects of one kind in scope (`:ks`, `:helmreleases` …).
    Kind(FluxKind),
}

/// What a command needs after its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Argument {
    None,
    Workspace,
    Cluster,
}

/// The commands without a kind: names (the first one is completed) and what follows them.
const NAMED: &[(&[&str], Argument)] = &[
    (&["all"], Argument::None),
    (&["triage"], Argument::None),
    (&["rollout", "ro"], Argument::None),
    (&["drift"], Argument::None),
    (&["fleet", "home"], Argument::None),
    (&["ws", "workspace"], Argument::Workspace),
    (&["cluster", "cl"], Argument::Cluster),
    (&["help"], Argument::None),
    (&["q", "quit", "q!"], Argument::None),
    (&["mark"], Argument::None),
    (&["unmark"], Argument::None),
    (&["results"], Argument::None),
    (&["audit"], Argument::None),
    (&["proposals", "prop"], Argument::None),
    (&["history"], Argument::None),
    (&["suspend"], Argument::None),
    (&["resume"], Argument::None),
    (&["reconcile"], Argument::None),
    (&["force"], Argument::None),
    (&["reset"], Argument::None),
];

/// A `:` line that is not a command: what to type instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("{0:?} is not a Flux kind")]
    NotAKind(String),
    #[error(":history {arg}: {why} (try :history 2h)")]
    History {
        arg: String,
        why: crate::units::DurationError,
    },
    #[error("unknown command :{0} (try :help)")]
    Unknown(String),
}

impl Command {
    /// Reads a typed line; `Ok(None)` for an empty one.
    pub fn parse(line: &str) -> Result<Option<Command>, CommandError> {
        let line = line.trim();
        let (name, arg) = match line.split_once(' ') {
            Some((c, a)) => (c, a.trim()),
            None => (line, ""),
        };
        let command = match name {
            "" => return Ok(None),
            "q" | "quit" | "q!" => Command::Quit,
            "help" => Command::Help,
            "fleet" | "home" => Command::Fleet,
            "all" => Command::All,
            "triage" => Command::Triage,
            "rollout" | "ro" if arg.is_empty() => Command::Rollout(None),
            "rollout" | "ro" => match FluxKind::parse(arg) {
                Some(kind) => Command::Rollout(Some(kind)),
                None => return Err(CommandError::NotAKind(arg.to_string())),
            },
            "drift" => Command::Drift,
            "mark" if arg == "stuck" => Command::MarkStuck,
            "mark" => Command::Mark,
            "unmark" => Command::Unmark,
            "results" => Command::Results,
            "audit" => Command::Audit,
            "proposals" | "prop" => Command::Proposals,
            "reject" => Command::Reject(arg.to_string()),
            "history" if arg.is_empty() => Command::History(std::time::Duration::from_secs(3600)),
            "history" => Command::History(crate::units::parse_duration(arg).map_err(|why| {
                CommandError::History {
                    arg: arg.to_string(),
                    why,
                }
            })?),
            "suspend" => Command::Act(Verb::Suspend),
            "resume" => Command::Act(Verb::Resume),
            "force" => Command::Act(Verb::Force),
            "reset" => Command::Act(Verb::Reset),
            "reconcile" if arg == "--with-source" => Command::Act(Verb::ReconcileWithSource),
            "reconcile" => Command::Act(Verb::Reconcile),
            "ws" | "workspace" => Command::Workspace(arg.to_string()),
            "cluster" | "cl" => Command::Cluster(arg.to_string()),
            other => match FluxKind::parse(other) {
                Some(kind) => Command::Kind(kind),
                None => return Err(CommandError::Unknown(other.to_string())),
            },
        };
        Ok(Some(command))
    }

    /// What follows the command named `name`, if it is one.
    pub fn argument(name: &str) -> Option<Argument> {
        NAMED
            .iter()
            .find(|(names, _)| names.contains(&name))
            .map(|(_, arg)| *arg)
    }

    /// Every word that starts a command, as completion offers them: a command taking an
    /// argument ends in a space.
    pub fn words() -> Vec<String> {
        let mut words: Vec<String> = NAMED
            .iter()
            .flat_map(|(names, arg)| {
                let space = if *arg == Argument::None { "" } else { " " };
                names.iter().map(move |n| format!("{n}{space}"))
            })
            .collect();
        for kind in FluxKind::ALL {
            words.extend(kind.short_names().iter().map(|s| s.to_string()));
            words.push(kind.plural().to_string());
        }
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_completed_word_parses_as_a_command() {
        for word in Command::words() {
            let parsed = Command::parse(&word);
            assert!(matches!(parsed, Ok(Some(_))), "{word:?}: {parsed:?}");
        }
        assert_eq!(
            Command::parse("reconcile --with-source"),
            Ok(Some(Command::Act(Verb::ReconcileWithSource)))
        );
        assert_eq!(
            Command::parse("ws  payments "),
            Ok(Some(Command::Workspace("payments".into())))
        );
        assert_eq!(
            Command::parse("hr"),
            Ok(Some(Command::Kind(FluxKind::HelmRelease)))
        );
        assert_eq!(Command::parse("  "), Ok(None));
        assert_eq!(
            Command::parse("rollout hr"),
            Ok(Some(Command::Rollout(Some(FluxKind::HelmRelease))))
        );
        assert_eq!(Command::parse("mark stuck"), Ok(Some(Command::MarkStuck)));
        assert_eq!(
            Command::parse("nope"),
            Err(CommandError::Unknown("nope".into()))
        );
        assert!(matches!(
            Command::parse("history soon"),
            Err(CommandError::History { .. })
        ));
    }
}
