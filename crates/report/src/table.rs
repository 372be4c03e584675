//! A plain aligned text table for people: numbers right-aligned, text left-aligned, a rule
//! under the header, no borders. Layout is comfy-table's; this only decides alignment.
//!
//! Output is plain ASCII without styling and without width limits (no wrapping), so it is
//! the same on a terminal, in a pipe and in a file.

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
}
