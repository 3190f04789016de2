//! A failure message as copies on other clusters word it: what the controllers make up afresh
//! on each left out. A leaf: reads only the text it is given.

/// The directory kustomize-controller builds in, a new number on every cluster and every run.
const BUILD_DIR: &str = "/tmp/kustomization-";

/// A failure message as its copies on other clusters say it: what the controllers make up
/// afresh each time left out — kustomize-controller's build directory
/// (`/tmp/kustomization-2501669022/apps`) and how long a wait took to the nanosecond (`health
/// check failed after 40.021560959s`) — so that one failure on five hundred clusters is one
/// root cause. Whole durations (`retrying in 30s`) are the object's own and stay.
pub fn shared_words(message: &str) -> std::borrow::Cow<'_, str> {
    let b = message.as_bytes();
    let mut out: Option<String> = None;
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        let start = i;
        // Bytes, not text: `i` may stand inside a character, and every cut begins and ends
        // at an ASCII byte (or after `µs`), where the text may be cut.
        let cut = if b[i..].starts_with(BUILD_DIR.as_bytes()) {
            let digits = b[i + BUILD_DIR.len()..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            i += BUILD_DIR.len() + digits;
            (digits > 0).then_some((start + BUILD_DIR.len(), i, ""))
        } else if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let end = fractional_duration(b, i);
            i = end.unwrap_or(i + 1);
            end.map(|end| (start, end, "…"))
        } else {
            i += 1;
            None
        };
        if let Some((from, to, instead)) = cut {
            let text = out.get_or_insert_with(|| String::with_capacity(message.len()));
            text.push_str(&message[copied..from]);
            text.push_str(instead);
            copied = to;
        }
    }
    match out {
        None => std::borrow::Cow::Borrowed(message),
        Some(mut text) => {
            text.push_str(&message[copied..]);
            std::borrow::Cow::Owned(text)
        }
    }
}

/// Where a Go duration with a fraction of a second (`40.021560959s`, `5m0.031942s`,
/// `1h2m3.5s`, `12.3ms`) that begins at `at` ends; None when none does.
fn fractional_duration(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    let mut fraction = false;
    loop {
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        i += digits;
        if b.get(i) == Some(&b'.') {
            let more = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if more == 0 {
                return None;
            }
            i += 1 + more;
            fraction = true;
        }
        let rest = &b[i..];
        let unit = ["ms", "us", "µs", "ns", "h", "m", "s"]
            .into_iter()
            .find(|u| rest.starts_with(u.as_bytes()))?;
        i += unit.len();
        let next_is_digit = b.get(i).is_some_and(u8::is_ascii_digit);
        if matches!(unit, "h" | "m") && next_is_digit && !fraction {
            continue;
        }
        let bounded = !b.get(i).is_some_and(u8::is_ascii_alphanumeric);
        return (fraction && bounded).then_some(i);
    }
}
