//! The reproduction's CSV files, written through `csv` + serde from one row struct per
//! file: the struct's field names are the header, one value a row. A float column says its
//! decimals in its type (`Fixed<2>` is `{:.2}`), so a file's bytes are what its format
//! string would have made; `Plain` is a float as `{}` writes it.

use serde::{Serialize, Serializer};

/// A float written with `D` decimals (`{:.D}`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fixed<const D: usize>(pub f64);

impl<const D: usize> Serialize for Fixed<D> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:.*}", D, self.0))
    }
}

/// A float as `{}` writes it (shortest round-trip, no exponent; `1` rather than `1.0`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Plain(pub f64);

impl Serialize for Plain {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// `rows` as a CSV file: a header of `T`'s field names, then one line a row (`\n` ends
/// every line). With no rows, the header alone (from `T::default()`).
pub fn csv_of<T: Serialize + Default>(rows: &[T]) -> Result<String, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if rows.is_empty() {
        w.serialize(T::default()).map_err(|e| e.to_string())?;
        let bytes = w.into_inner().map_err(|e| e.to_string())?;
        let text = String::from_utf8(bytes).map_err(|e| e.to_string())?;
        let header = text.lines().next().unwrap_or_default();
        return Ok(format!("{header}\n"));
    }
    for r in rows {
        w.serialize(r).map_err(|e| e.to_string())?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Default)]
    struct Row {
        name: &'static str,
        n: u64,
        x: Fixed<2>,
        y: Fixed<0>,
        z: Plain,
        flag: bool,
    }

    #[test]
    fn rows_are_written_as_their_format_strings_would() {
        let rows = [
            Row {
                name: "a",
                n: 7,
                x: Fixed(1.005),
                y: Fixed(12.5),
                z: Plain(1.0),
                flag: true,
            },
            Row {
                name: "b c",
                n: 0,
                x: Fixed(-0.0),
                y: Fixed(f64::NAN),
                z: Plain(0.1 + 0.2),
                flag: false,
            },
        ];
        let want = format!(
            "name,n,x,y,z,flag\na,7,{:.2},{:.0},{},true\nb c,0,{:.2},{:.0},{},false\n",
            1.005,
            12.5,
            1.0,
            -0.0,
            f64::NAN,
            0.1 + 0.2
        );
        assert_eq!(csv_of(&rows).unwrap(), want);
    }

    #[test]
    fn no_rows_is_the_header_alone() {
        assert_eq!(csv_of::<Row>(&[]).unwrap(), "name,n,x,y,z,flag\n");
    }
}
