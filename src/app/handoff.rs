//! How a plugin run ended, as the model hears of it and the status line says it. Running one —
//! its kubeconfig, its journal lines, the program — is I/O, in [`crate::tui::handoff`].

/// How a plugin run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// It could not start, or was refused before it did.
    NotRun(String),
}

impl Exit {
    pub fn of(status: std::io::Result<std::process::ExitStatus>) -> Exit {
        use std::os::unix::process::ExitStatusExt;
        match status {
            Ok(s) => match (s.code(), s.signal()) {
                (Some(code), _) => Exit::Code(code),
                (None, Some(signal)) => Exit::Signal(signal),
                (None, None) => Exit::NotRun("ended without a status".into()),
            },
            Err(e) => Exit::NotRun(format!("cannot start it: {e}")),
        }
    }

    pub fn success(&self) -> bool {
        *self == Exit::Code(0)
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exit {code}"),
            Exit::Signal(signal) => write!(f, "killed by signal {signal}"),
            Exit::NotRun(why) => write!(f, "not run: {why}"),
        }
    }
}

/// A plugin run that ended: for the status line.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginEnded {
    /// "k9s on prod-eu-1".
    pub what: String,
    pub exit: Exit,
    /// A background plugin's last lines of output (stdout and stderr), oldest first.
    pub tail: Vec<String>,
}

impl PluginEnded {
    /// "describe on … on prod-eu-1: exit 1 — Error from server (NotFound): …".
    pub fn describe(&self) -> String {
        let mut text = format!("{}: {}", self.what, self.exit);
        if !self.tail.is_empty() {
            text.push_str(" — ");
            text.push_str(&self.tail.join(" ⏎ "));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_read_as_people_say_them() {
        let ended = PluginEnded {
            what: "describe on prod".into(),
            exit: Exit::Code(1),
            tail: vec!["Error from server (NotFound)".into()],
        };
        assert_eq!(
            ended.describe(),
            "describe on prod: exit 1 — Error from server (NotFound)"
        );
        assert!(Exit::Code(0).success());
        assert!(!Exit::Signal(9).success());
    }
}
