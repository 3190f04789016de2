//! Shell-style globs, as every selector and rule of fluxfleet writes them. A leaf: imports
//! nothing of the crate.

/// One element of a pattern.
#[derive(Debug)]
enum Token {
    /// `*`: any run of characters.
    Any,
    /// `?`: one character.
    One,
    /// `[abc]`, `[a-z]`, `[!0-9]` (or `[^…]`): one character of the set, or not of it.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Literal(char),
}

impl Token {
    fn matches(&self, c: char) -> bool {
        match self {
            Token::Any => true,
            Token::One => true,
            Token::Class { negated, ranges } => {
                ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
            }
            Token::Literal(l) => *l == c,
        }
    }
}

/// The pattern's tokens. A `[` with no closing `]` is a literal `[`, as in the shell; a `]`
/// right after `[` or `[!` is a member of the set.
fn tokens(pattern: &str) -> Vec<Token> {
    let p: Vec<char> = pattern.chars().collect();
    let mut out = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '*' => out.push(Token::Any),
            '?' => out.push(Token::One),
            '[' => match class(&p[i + 1..]) {
                Some((token, used)) => {
                    out.push(token);
                    i += used;
                }
                None => out.push(Token::Literal('[')),
            },
            c => out.push(Token::Literal(c)),
        }
        i += 1;
    }
    out
}

/// The set that follows a `[`, and how many characters it took (its `]` included).
fn class(p: &[char]) -> Option<(Token, usize)> {
    let negated = matches!(p.first(), Some('!' | '^'));
    let mut i = usize::from(negated);
    let mut ranges = Vec::new();
    let start = i;
    while i < p.len() {
        let c = p[i];
        if c == ']' && i > start {
            return Some((Token::Class { negated, ranges }, i + 1));
        }
        match (p.get(i + 1), p.get(i + 2)) {
            (Some('-'), Some(&hi)) if hi != ']' => {
                ranges.push((c.min(hi), c.max(hi)));
                i += 3;
            }
            _ => {
                ranges.push((c, c));
                i += 1;
            }
        }
    }
    None
}

/// Shell-style match: `*` any run of characters, `?` one character, `[…]` one of a set (ranges
/// and `!` or `^` to negate), everything else literal.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p = tokens(pattern);
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point for the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(Token::Any) => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(token) if token.matches(t[ti]) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|t| matches!(t, Token::Any))
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

    #[test]
    fn sets_match_one_character_of_them_as_the_shell_does() {
        assert!(glob_match("real-[12]", "real-1"));
        assert!(glob_match("real-[12]", "real-2"));
        assert!(!glob_match("real-[12]", "real-3"));
        assert!(!glob_match("real-[12]", "real-12"));
        assert!(glob_match("eu-prod-00[0-4]", "eu-prod-003"));
        assert!(!glob_match("eu-prod-00[0-4]", "eu-prod-005"));
        assert!(glob_match("eu-[!d]*", "eu-prod-1"));
        assert!(!glob_match("eu-[!d]*", "eu-dev-1"));
        assert!(glob_match("eu-[^d]*", "eu-prod-1"));
        // A `]` first in the set is one of it; a `-` first or last is literal.
        assert!(glob_match("[]a]", "]"));
        assert!(glob_match("x[-a]", "x-"));
        assert!(glob_match("x[a-]", "x-"));
        // An unclosed `[` is itself.
        assert!(glob_match("a[b", "a[b"));
        assert!(!glob_match("a[b", "ab"));
        // With a star before it, backtracking still finds the match.
        assert!(glob_match("*-[0-9][0-9]", "pay-prod-17"));
        assert!(!glob_match("*-[0-9][0-9]", "pay-prod-1x"));
    }
}
