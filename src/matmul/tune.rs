//! The tile autotuner: on the first matmul of a kind (device, kernel, operand layout, size
//! class) it times each candidate tile configuration on the problem, keeps the fastest, and
//! remembers the choice (in the file [`TuningOptions::file`] names, across runs); with
//! [`TuningOptions::measure`] off it takes the first candidate. Progress goes to `log`.

use super::options::TuningOptions;
use crate::error::Result;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

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
    pub fn get(&self, key: &str) -> Option<String> {
        self.choices.lock().unwrap_or_else(|p| p.into_inner()).get(key).cloned()
    }

    /// Picks among `candidates` for `key`: the remembered choice, or the fastest by `measure`
    /// (seconds), which is then saved. Every candidate is measured in `PASSES` rounds and keeps
    /// its best time, so that one disturbed measurement (a GPU still climbing from idle clocks,
    /// another process) cannot decide the choice.
    pub fn choose(&self, key: &str, candidates: &[&str], mut measure: impl FnMut(&str) -> Result<f64>) -> Result<String> {
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

    #[test]
    fn fastest_candidate_is_chosen_saved_and_reused() {
        let dir = std::env::temp_dir().join(format!("matbridge-tune-{}", std::process::id()));
        let tuner = Tuner { path: Some(dir.join("t.json")), measure: true, choices: Mutex::new(BTreeMap::new()) };
        let times = [("a", 3.0), ("b", 1.0), ("c", 2.0)];
        let pick = tuner.choose("k", &["a", "b", "c"], |c| Ok(times.iter().find(|t| t.0 == c).unwrap().1)).unwrap();
        assert_eq!(pick, "b");
        // Remembered: no measuring the second time.
        let again = tuner.choose("k", &["a", "b", "c"], |_| panic!("measured twice")).unwrap();
        assert_eq!(again, "b");
        let saved: BTreeMap<String, String> = serde_json::from_str(&std::fs::read_to_string(dir.join("t.json")).unwrap()).unwrap();
        assert_eq!(saved["k"], "b");
    }

    #[test]
    fn one_disturbed_measurement_does_not_decide() {
        let tuner = Tuner { path: None, measure: true, choices: Mutex::new(BTreeMap::new()) };
        // "a" is measured slow the first time (clocks still climbing) and fastest the second.
        let mut calls = Vec::new();
        let pick = tuner
            .choose("k", &["a", "b"], |c| {
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
