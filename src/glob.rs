//! Shell-style globs, as every selector and rule of fluxfleet writes them. A leaf: imports
//! nothing of the crate.

/// Shell-style match: `*` any run of characters, `?` one character, everything else literal.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // Iterative matching with one backtrack point for the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("pay-*", "pay-prod-001"));
        assert!(glob_match("*-prod-*", "pay-prod-001"));
        assert!(glob_match("pay-???-001", "pay-dev-001"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("pay-*", "retail-prod"));
        assert!(!glob_match("a*b", "a-b-c"));
        assert!(glob_match("a*b*c", "a-b-b-c"));
    }
}
