//! A plain aligned text table: numbers right-aligned, text left-aligned.

pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

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
        let mut w: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let numeric = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_digit() || ".-/ e+%".contains(c))
        };
        let right: Vec<bool> = (0..n)
            .map(|i| {
                i > 0
                    && !self.rows.is_empty()
                    && self
                        .rows
                        .iter()
                        .all(|r| r.get(i).is_some_and(|c| numeric(c)))
            })
            .collect();
        let line = |cells: &[String]| {
            let mut out = String::new();
            for (i, c) in cells.iter().enumerate().take(n) {
                let pad = w[i] - c.chars().count();
                if i > 0 {
                    out.push_str("  ");
                }
                if right[i] {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(c);
                } else {
                    out.push_str(c);
                    if i + 1 < n {
                        out.push_str(&" ".repeat(pad));
                    }
                }
            }
            out.trim_end().to_string() + "\n"
        };
        let mut s = line(&self.header);
        s.push_str(
            &(w.iter()
                .map(|x| "-".repeat(*x))
                .collect::<Vec<_>>()
                .join("  ")
                + "\n"),
        );
        for r in &self.rows {
            s.push_str(&line(r));
        }
        s
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
        assert_eq!(t.render(), "name   n\n----  --\na     10\nlong   7\n");
    }
}
