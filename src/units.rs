//! Units in settings and flags, and how times and hashes are shown to people (as `flux get`
//! and kubectl show them).

use std::time::Duration;

use jiff::Timestamp;

/// Why a text is not a duration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("invalid duration {0:?} (try 800ms, 20s, 5m)")]
    NotANumber(String),
    #[error("invalid duration unit in {0:?} (use ms, s, m or h)")]
    Unit(String),
    #[error("duration {0:?} is too long")]
    TooLong(String),
}

/// `1.5GiB` → (1.5, "GiB"); None when it does not start with a number.
fn number_and_unit(s: &str) -> Option<(f64, &str)> {
    let (num, unit) = s.split_at(
        s.find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len()),
    );
    Some((num.parse().ok()?, unit))
}

/// Parses `1.5s`, `800ms`, `2m`, `1h` or a plain number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let s = s.trim();
    let (n, unit) = number_and_unit(s).ok_or_else(|| DurationError::NotANumber(s.to_string()))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(DurationError::Unit(s.to_string())),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| DurationError::TooLong(s.to_string()))
}

/// Reads a duration as Go writes it (`metav1.Duration`: `372.911688ms`, `5m0.021907s`,
/// `1h0m0s`, `0s`), as the controllers record intervals and run times. None for anything else
/// — a sign, an unknown unit, more than 64 characters (a cluster's text, bounded) — and for
/// what overflows.
pub fn parse_go_duration(s: &str) -> Option<Duration> {
    if s.is_empty() || s.len() > 64 {
        return None;
    }
    if s == "0" {
        return Some(Duration::ZERO);
    }
    let mut rest = s;
    let mut nanos: u128 = 0;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return None;
        }
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        let per: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        // The fraction's digits past the nanosecond say nothing: at most 18 are read.
        let digits = &fraction[..fraction.len().min(18)];
        let part: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        let scale = 10u128.pow(digits.len() as u32);
        nanos = nanos.checked_add(whole.checked_mul(per)?.checked_add(part * per / scale)?)?;
        rest = next;
    }
    let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
    Some(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

/// Why a text is not a size in bytes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("invalid size {0:?} (try 512MiB, 2GiB, 1000000)")]
    NotANumber(String),
    #[error("invalid size unit in {0:?} (use B, KiB, MiB, GiB, TiB, or KB, MB, GB, TB)")]
    Unit(String),
    #[error("size {0:?} is too large")]
    TooLarge(String),
}

/// Parses `512MiB`, `2GiB`, `1.5GB`, `64KiB` or a plain number of bytes.
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let s = s.trim();
    let (n, unit) = number_and_unit(s).ok_or_else(|| SizeError::NotANumber(s.to_string()))?;
    let unit_bytes: f64 = match unit.trim() {
        "" | "B" => 1.0,
        "KiB" | "Ki" => 1024.0,
        "MiB" | "Mi" => 1024.0 * 1024.0,
        "GiB" | "Gi" => 1024.0 * 1024.0 * 1024.0,
        "TiB" | "Ti" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "KB" | "kB" | "K" => 1e3,
        "MB" | "M" => 1e6,
        "GB" | "G" => 1e9,
        "TB" | "T" => 1e12,
        _ => return Err(SizeError::Unit(s.to_string())),
    };
    let bytes = (n * unit_bytes).round();
    if !bytes.is_finite() || bytes >= 2f64.powi(63) {
        return Err(SizeError::TooLarge(s.to_string()));
    }
    Ok(bytes as u64)
}

/// A size in bytes as people read it: `512 B`, `1.5 KiB`, `240 MiB`, `2.0 GiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if value >= 100.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Prints a duration the way `parse_duration` reads it back, at a useful precision.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// "1 object", "3 objects".
pub fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// "12s", "5m", "3h", "2d" since `then`.
pub fn age(then: Option<Timestamp>, now: Timestamp) -> String {
    let Some(then) = then else {
        return "-".into();
    };
    span(now.duration_since(then).as_secs())
}

/// A number of seconds as an age says it: `45s`, `30m`, `5h`, `3d` (negative as 0).
pub fn span(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        0..120 => format!("{secs}s"),
        120..7_200 => format!("{}m", secs / 60),
        7_200..172_800 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// `text` cut to at most `max` characters, with `…` where it was cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

/// Shortens every run of 40–128 hex digits to its first 8, as `flux get` does for revisions and
/// messages (`main@sha1:2f22765d`).
pub fn truncate_hex(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let is_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let at_boundary = i == 0 || !word(bytes[i - 1]);
        if at_boundary && is_hex(bytes[i]) {
            let end = (i..bytes.len())
                .find(|&j| !is_hex(bytes[j]))
                .unwrap_or(bytes.len());
            let run = end - i;
            let ends_word = end == bytes.len() || !word(bytes[end]);
            if (40..=128).contains(&run) && ends_word {
                out.push_str(&text[i..i + 8]);
                i = end;
                continue;
            }
            out.push_str(&text[i..end]);
            i = end;
            continue;
        }
        let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + ch_len]);
        i += ch_len;
    }
    out
}

/// What a line break in a message is shown as wherever a message takes one line (tables, the
/// TUI's rows): the lines it joins stay readable, and where they were joined is seen.
pub const LINE_BREAK: &str = " ⏎ ";

/// `text` on one line: each run of line breaks (with the blanks around them) written as
/// [`LINE_BREAK`], none at either end. Borrowed when there is none.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    let breaks = |c: char| c == '\n' || c == '\r';
    if !text.contains(breaks) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (i, line) in text
        .split(breaks)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        if i > 0 {
            out.push_str(LINE_BREAK);
        }
        out.push_str(line);
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    /// helm-controller's messages carry the Helm logs on lines of their own.
    #[test]
    fn a_message_of_several_lines_reads_on_one() {
        assert_eq!(super::one_line("plain"), "plain");
        assert_eq!(
            super::one_line("Helm upgrade failed: timeout\n\nLast Helm logs:\r\n  preparing\n"),
            "Helm upgrade failed: timeout ⏎ Last Helm logs: ⏎ preparing"
        );
    }

    use super::*;

    #[test]
    fn hex_runs_are_shortened_like_flux_get() {
        let sha = "2f22765d04931a078909145ca628d2264c852d7d";
        assert_eq!(
            truncate_hex(&format!("main@sha1:{sha}")),
            "main@sha1:2f22765d"
        );
        assert_eq!(
            truncate_hex(&format!("applied {sha} and {sha}")),
            "applied 2f22765d and 2f22765d"
        );
        assert_eq!(truncate_hex("v1.2.3 deadbeef"), "v1.2.3 deadbeef");
        // Not a whole word: left alone.
        assert_eq!(truncate_hex(&format!("x{sha}")), format!("x{sha}"));
        assert_eq!(truncate_hex("é ü"), "é ü");
    }

    #[test]
    fn sizes_parse_in_binary_and_decimal_units_and_refuse_nonsense() {
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("2 Gi"), Ok(2 << 30));
        assert_eq!(parse_size("3 lbs"), Err(SizeError::Unit("3 lbs".into())));
        assert_eq!(parse_size("GiB"), Err(SizeError::NotANumber("GiB".into())));
        assert_eq!(
            parse_size("99999999TiB"),
            Err(SizeError::TooLarge("99999999TiB".into()))
        );
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(1536), "1.5 KiB");
        assert_eq!(format_size(240 << 20), "240 MiB");
        assert_eq!(format_size(1 << 30), "1.0 GiB");
    }

    #[test]
    fn go_durations_read_as_the_controllers_write_them() {
        let ms = |n: u64| Some(Duration::from_millis(n));
        assert_eq!(
            parse_go_duration("372.911688ms"),
            Some(Duration::from_nanos(372_911_688))
        );
        assert_eq!(
            parse_go_duration("5m0.021907s"),
            Some(Duration::from_micros(300_021_907))
        );
        assert_eq!(parse_go_duration("1h0m0s"), ms(3_600_000));
        assert_eq!(parse_go_duration("10m0s"), ms(600_000));
        assert_eq!(parse_go_duration("0s"), ms(0));
        assert_eq!(parse_go_duration("0"), ms(0));
        assert_eq!(parse_go_duration("12µs"), Some(Duration::from_micros(12)));
        for bad in [
            "",
            "-1s",
            "5",
            "1d",
            "s",
            "1.2.3s",
            "1s ",
            ".s",
            &"1s".repeat(40),
        ] {
            assert_eq!(parse_go_duration(bad), None, "{bad:?}");
        }
    }

    proptest::proptest! {
        /// Whatever a cluster writes, reading it ends; what Go would write reads back exactly
        /// to the millisecond.
        #[test]
        fn any_text_reads_or_is_refused_and_go_forms_read_back(
            text in "\\PC{0,80}",
            h in 0u64..100, m in 0u64..60, s in 0u64..60, milli in 0u64..1000,
        ) {
            let _ = parse_go_duration(&text);
            let written = format!("{h}h{m}m{s}.{milli:03}s");
            let read = parse_go_duration(&written).map(|d| d.as_millis());
            proptest::prop_assert_eq!(read, Some(u128::from(((h * 60 + m) * 60 + s) * 1000 + milli)));
        }
    }

    #[test]
    fn durations_parse_and_refuse_nonsense() {
        assert_eq!(parse_duration("800ms"), Ok(Duration::from_millis(800)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(
            parse_duration("5 parsecs"),
            Err(DurationError::Unit("5 parsecs".into()))
        );
        assert!(matches!(
            parse_duration("99999999999999999999999h"),
            Err(DurationError::TooLong(_))
        ));
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
    }
}
