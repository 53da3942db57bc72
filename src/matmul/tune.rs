//! The tile autotuner: on the first matmul of a kind (device, kernel, operand layout, size
//! class) it times each candidate tile configuration on the problem, keeps the fastest, and
//! remembers the choice (in the file [`TuningOptions::file`] names, across runs); with
//! [`TuningOptions::measure`] off it takes the first candidate. Progress goes to `log`.

use super::options::TuningOptions;
use super::DType;
use crate::error::Result;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Mutex;

/// Problem sizes that share a tuning choice (by the larger of M and N).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SizeClass {
    /// Up to 1024.
    Small,
    /// Up to 3072.
    Medium,
    Large,
}

impl SizeClass {
    pub fn of(extent: usize) -> SizeClass {
        match extent {
            0..=1024 => SizeClass::Small,
            1025..=3072 => SizeClass::Medium,
            _ => SizeClass::Large,
        }
    }
}

/// What a tuning choice is made for: device and driver, kernel family and input type, the
/// operand layout the kernel reads, the size class, whether the operands are padded to whole
/// tiles, and the wide-tile configurations the problem fits (so that a remembered choice is
/// always one of the problem's candidates). Its [`fmt::Display`] form keys the choices file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TuningKey {
    pub device: String,
    pub driver: String,
    pub family: &'static str,
    pub dtype: DType,
    pub a_m_contiguous: bool,
    pub b_k_contiguous: bool,
    pub size: SizeClass,
    pub padded: bool,
    pub wide: Vec<String>,
}

impl fmt::Display for TuningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = match self.size {
            SizeClass::Small => "small",
            SizeClass::Medium => "medium",
            SizeClass::Large => "large",
        };
        write!(f, "{}|{}|{}|{}|a{}b{}|{size}", self.device, self.driver, self.family, self.dtype, u8::from(self.a_m_contiguous), u8::from(self.b_k_contiguous))?;
        if self.padded {
            f.write_str("|padded")?;
        }
        self.wide.iter().try_for_each(|w| write!(f, "|{w}"))
    }
}

/// Measuring rounds over the candidates.
const PASSES: usize = 2;

/// Choices by key, persisted as JSON.
pub struct Tuner {
    path: Option<PathBuf>,
    measure: bool,
    choices: Mutex<BTreeMap<String, String>>,
}

impl Tuner {
    /// Loads the choices file `options` names (a missing or unreadable file is an empty cache).
    pub fn load(options: &TuningOptions) -> Tuner {
        let path = options.file.clone();
        let choices = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()).and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default();
        Tuner { path, measure: options.measure, choices: Mutex::new(choices) }
    }

    /// The remembered choice for `key`, if any.
    pub fn get(&self, key: &TuningKey) -> Option<String> {
        self.choices.lock().unwrap_or_else(|p| p.into_inner()).get(&key.to_string()).cloned()
    }

    /// Picks among `candidates` for `key`: the remembered choice, or the fastest by `measure`
    /// (seconds), which is then saved. Every candidate is measured in `PASSES` rounds and keeps
    /// its best time, so that one disturbed measurement (a GPU still climbing from idle clocks,
    /// another process) cannot decide the choice.
    pub fn choose(&self, key: &TuningKey, candidates: &[&str], mut measure: impl FnMut(&str) -> Result<f64>) -> Result<String> {
        if let Some(c) = self.get(key).filter(|c| candidates.contains(&c.as_str())) {
            return Ok(c);
        }
        let first = candidates.first().map(|c| c.to_string()).unwrap_or_default();
        if candidates.len() < 2 || !self.measure {
            return Ok(first);
        }
        // Progress goes to `log` (the CLI shows it with RUST_LOG=info); the library draws nothing.
        let total = candidates.len() * PASSES;
        let mut done = 0;
        let mut times = vec![f64::INFINITY; candidates.len()];
        for pass in 0..PASSES {
            for (c, best) in candidates.iter().zip(&mut times) {
                let t = measure(c)?;
                done += 1;
                log::info!("tuning {key} [{done}/{total}]: {c} {:.3} ms (pass {})", t * 1e3, pass + 1);
                *best = best.min(t);
            }
        }
        let best = times.iter().zip(candidates).fold((f64::INFINITY, first), |best, (&t, c)| if t < best.0 { (t, c.to_string()) } else { best });
        let mut choices = self.choices.lock().unwrap_or_else(|p| p.into_inner());
        choices.insert(key.to_string(), best.1.clone());
        if let Some(path) = &self.path {
            let saved = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|_| std::fs::write(path, serde_json::to_string_pretty(&*choices).unwrap_or_default()));
            if let Err(e) = saved {
                log::warn!("could not save tuning choices to {}: {e}", path.display());
            }
        }
        Ok(best.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> TuningKey {
        TuningKey {
            device: "gpu".into(),
            driver: "1".into(),
            family: "f16_f32",
            dtype: DType::F16,
            a_m_contiguous: false,
            b_k_contiguous: true,
            size: SizeClass::of(4096),
            padded: true,
            wide: vec!["w1".into()],
        }
    }

    #[test]
    fn keys_name_every_field_in_the_file() {
        assert_eq!(key().to_string(), "gpu|1|f16_f32|f16|a0b1|large|padded|w1");
        let plain = TuningKey { padded: false, wide: Vec::new(), size: SizeClass::of(1024), ..key() };
        assert_eq!(plain.to_string(), "gpu|1|f16_f32|f16|a0b1|small");
    }

    #[test]
    fn fastest_candidate_is_chosen_saved_and_reused() {
        let dir = std::env::temp_dir().join(format!("matbridge-tune-{}", std::process::id()));
        let tuner = Tuner { path: Some(dir.join("t.json")), measure: true, choices: Mutex::new(BTreeMap::new()) };
        let times = [("a", 3.0), ("b", 1.0), ("c", 2.0)];
        let pick = tuner.choose(&key(), &["a", "b", "c"], |c| Ok(times.iter().find(|t| t.0 == c).unwrap().1)).unwrap();
        assert_eq!(pick, "b");
        // Remembered: no measuring the second time.
        let again = tuner.choose(&key(), &["a", "b", "c"], |_| panic!("measured twice")).unwrap();
        assert_eq!(again, "b");
        let saved: BTreeMap<String, String> = serde_json::from_str(&std::fs::read_to_string(dir.join("t.json")).unwrap()).unwrap();
        assert_eq!(saved[&key().to_string()], "b");
    }

    #[test]
    fn one_disturbed_measurement_does_not_decide() {
        let tuner = Tuner { path: None, measure: true, choices: Mutex::new(BTreeMap::new()) };
        // "a" is measured slow the first time (clocks still climbing) and fastest the second.
        let mut calls = Vec::new();
        let pick = tuner
            .choose(&key(), &["a", "b"], |c| {
                calls.push(c.to_string());
                Ok(match (c, calls.len()) {
                    ("a", 1) => 9.0,
                    ("a", _) => 1.0,
                    _ => 2.0,
                })
            })
            .unwrap();
        assert_eq!(pick, "a");
        assert_eq!(calls, ["a", "b", "a", "b"]);
    }
}
