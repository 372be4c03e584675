//! A plain aligned text table for people: numbers right-aligned, text left-aligned, a rule
//! under the header, no borders. Layout is comfy-table's; this only decides alignment.
//!
//! Output is plain text without styling and, with `render`, without width limits (no
//! wrapping), so it is the same on a terminal, in a pipe and in a file. `render_within`
//! shortens the widest cells (ending them with "…") until every line fits a width.

use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement};

pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// comfy-table's preset: 19 characters for borders, lines and intersections; here only the
/// header line (index 5) is drawn, as dashes.
const STYLE: &str = "     -             ";

impl Table {
    pub fn new(header: Vec<&str>) -> Table {
        Table {
            header: header.into_iter().map(String::from).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// `render`, with the widest column's cells cut (ending in "…") until no line is wider
    /// than `width` characters; a table that cannot fit (more columns than width allows at
    /// 8 characters each) is cut as far as that.
    pub fn render_within(&self, width: usize) -> String {
        const MIN: usize = 8;
        let chars = |s: &str| s.chars().count();
        let mut t = Table {
            header: self.header.clone(),
            rows: self.rows.clone(),
        };
        loop {
            let out = t.render();
            let widest = out.lines().map(chars).max().unwrap_or(0);
            if widest <= width {
                return out;
            }
            let n = t.header.len();
            let col_w = |i: usize| {
                std::iter::once(&t.header)
                    .chain(t.rows.iter())
                    .filter_map(|r| r.get(i))
                    .map(|c| chars(c))
                    .max()
                    .unwrap_or(0)
            };
            let Some(i) = (0..n).filter(|&i| col_w(i) > MIN).max_by_key(|&i| col_w(i)) else {
                return out;
            };
            let w = col_w(i);
            let cut = (w - (widest - width)).max(MIN).min(w - 1);
            for r in std::iter::once(&mut t.header).chain(t.rows.iter_mut()) {
                if let Some(c) = r.get_mut(i) {
                    if chars(c) > cut {
                        *c = c.chars().take(cut - 1).collect::<String>() + "…";
                    }
                }
            }
        }
    }

    pub fn render(&self) -> String {
        let n = self.header.len();
        let numeric = |s: &str| {
            !s.is_empty()
                && (s == "n/a"
                    || s.chars()
                        .all(|c| c.is_ascii_digit() || ".-/ e+%".contains(c)))
        };
        let right: Vec<bool> = (0..n)
            .map(|i| {
                i > 0
                    && !self.rows.is_empty()
                    && self
                        .rows
                        .iter()
                        .all(|r| r.get(i).is_some_and(|c| numeric(c)))
                    && self
                        .rows
                        .iter()
                        .any(|r| r.get(i).is_some_and(|c| c != "n/a"))
            })
            .collect();
        let mut t = comfy_table::Table::new();
        t.load_preset(STYLE)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(self.header.clone());
        for r in &self.rows {
            t.add_row(r.iter().take(n).cloned().collect::<Vec<_>>());
        }
        for (i, col) in t.column_iter_mut().enumerate() {
            col.set_padding((0, 2));
            col.set_constraint(ColumnConstraint::ContentWidth);
            if right.get(i).copied().unwrap_or(false) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
        t.to_string()
            .lines()
            .map(|l| l.trim_end().to_string() + "\n")
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(vec!["name", "n"]);
        t.row(vec!["a".into(), "10".into()]);
        t.row(vec!["long".into(), "7".into()]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 4, "{s}");
        assert!(
            lines[0].starts_with("name") && lines[0].ends_with('n'),
            "{s}"
        );
        assert!(lines[1].starts_with("----"), "{s}");
        assert!(
            lines[2].starts_with("a ") && lines[2].ends_with("10"),
            "{s}"
        );
        assert!(
            lines[3].starts_with("long") && lines[3].ends_with(" 7"),
            "{s}"
        );
        // Right-aligned numbers end in the same column.
        assert_eq!(lines[2].len(), lines[3].len(), "{s}");
    }

    #[test]
    fn render_within_cuts_the_widest_column_to_fit() {
        let mut t = Table::new(vec!["id", "text", "verdict"]);
        t.row(vec!["a".into(), "x".repeat(300), "agrees / off".into()]);
        t.row(vec!["b".into(), "short".into(), "agrees".into()]);
        let s = t.render_within(60);
        for l in s.lines() {
            assert!(l.chars().count() <= 60, "{l}");
        }
        assert!(
            s.contains("…") && s.contains("agrees / off") && s.contains("short"),
            "{s}"
        );
        // A table that fits is unchanged.
        let mut small = Table::new(vec!["id"]);
        small.row(vec!["a".into()]);
        assert_eq!(small.render_within(60), small.render());
    }
}
