//! Lifted kernels by content: the exact code bytes plus a key of everything else
//! the lift depends on (so equal content never lifts twice, and different content
//! never shares a kernel).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

use crate::aql::loader::LoadedKernel;
use crate::aql::status::AqlError;

pub(super) struct LiftCache<K> {
    map: Mutex<HashMap<(Vec<u8>, K), LoadedKernel>>,
}

impl<K> Default for LiftCache<K> {
    fn default() -> Self {
        LiftCache {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Hash + Eq + Clone> LiftCache<K> {
    /// The cached kernel for (`code`, `key`), or `lift()`'s (cached when it succeeds).
    pub fn get_or_lift(
        &self,
        code: &[u8],
        key: K,
        lift: impl FnOnce() -> Result<LoadedKernel, AqlError>,
    ) -> Result<LoadedKernel, AqlError> {
        let k = (code.to_vec(), key);
        if let Some(hit) = self.map.lock().unwrap_or_else(|e| e.into_inner()).get(&k) {
            return Ok(hit.clone());
        }
        let loaded = lift()?;
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(k, loaded.clone());
        Ok(loaded)
    }

    /// Distinct kernels lifted so far.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}
