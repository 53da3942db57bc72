//! A process-wide gate that keeps the creation and destruction of Vulkan instances and devices
//! apart from every other Vulkan call the runtime makes.
//!
//! NVIDIA's Vulkan driver (580, on the H200) can stop for good when one thread destroys a device
//! while other threads of the process are inside the driver for other devices: the destroying
//! thread waits for a driver thread that spins, and the others (creating pipelines, submitting,
//! destroying a second device) wait for a lock inside the driver. Vulkan allows all of this,
//! since the objects are distinct, so the runtime keeps the calls apart itself: creating or
//! destroying an instance or a device is [`exclusive`], every other call [`shared`].
//!
//! Shared sections of one thread nest, and a thread that holds the gate exclusively may open
//! shared sections inside. A thread waiting for exclusive access keeps new outermost shared
//! sections out, so a busy thread cannot starve it. A shared section covers a whole operation
//! (a submission and its wait included), so a device is destroyed only between other threads'
//! operations.

use std::cell::Cell;
use std::sync::{Condvar, Mutex, MutexGuard};

struct State {
    /// Threads inside at least one shared section.
    shared: usize,
    /// A thread holds the gate exclusively.
    exclusive: bool,
    /// Threads waiting for exclusive access.
    waiting: usize,
}

static STATE: Mutex<State> = Mutex::new(State { shared: 0, exclusive: false, waiting: 0 });
static CHANGED: Condvar = Condvar::new();

thread_local! {
    /// Sections this thread holds, shared and exclusive, nested.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// This thread holds the gate exclusively.
    static EXCLUSIVE: Cell<bool> = const { Cell::new(false) };
}

fn state() -> MutexGuard<'static, State> {
    // The state is updated with no code that can panic while the lock is held.
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

fn wait(guard: MutexGuard<'static, State>) -> MutexGuard<'static, State> {
    CHANGED.wait(guard).unwrap_or_else(|p| p.into_inner())
}

/// Held while a section lasts; dropping it leaves the section.
#[must_use = "the section ends when the guard is dropped"]
pub(crate) struct Section {
    kind: Kind,
}

enum Kind {
    /// A section inside another of the same thread: nothing to release but the depth.
    Nested,
    Shared,
    Exclusive,
}

/// Enters a shared section: waits while another thread holds the gate exclusively or waits for
/// it, unless this thread is already inside a section.
pub(crate) fn shared() -> Section {
    let depth = DEPTH.get();
    DEPTH.set(depth + 1);
    if depth > 0 {
        return Section { kind: Kind::Nested };
    }
    let mut s = state();
    while s.exclusive || s.waiting > 0 {
        s = wait(s);
    }
    s.shared += 1;
    Section { kind: Kind::Shared }
}

/// Enters an exclusive section: waits until no other thread is inside a section. A thread that
/// holds a shared section may ask for exclusive access; it then waits for the others only.
pub(crate) fn exclusive() -> Section {
    let depth = DEPTH.get();
    DEPTH.set(depth + 1);
    if EXCLUSIVE.get() {
        return Section { kind: Kind::Nested };
    }
    let own = usize::from(depth > 0);
    let mut s = state();
    s.waiting += 1;
    while s.exclusive || s.shared > own {
        s = wait(s);
    }
    s.waiting -= 1;
    s.exclusive = true;
    EXCLUSIVE.set(true);
    Section { kind: Kind::Exclusive }
}

impl Drop for Section {
    fn drop(&mut self) {
        DEPTH.set(DEPTH.get().saturating_sub(1));
        match self.kind {
            Kind::Nested => return,
            Kind::Shared => state().shared -= 1,
            Kind::Exclusive => {
                EXCLUSIVE.set(false);
                state().exclusive = false;
            }
        }
        CHANGED.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    /// No shared section overlaps an exclusive one, sections nest, and a thread waiting for
    /// exclusive access gets it while others keep entering shared sections.
    #[test]
    fn exclusive_sections_exclude_every_other_thread() {
        let inside_shared = Arc::new(AtomicUsize::new(0));
        let inside_exclusive = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let overlaps = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (inside_shared, inside_exclusive, stop, overlaps) = (inside_shared.clone(), inside_exclusive.clone(), stop.clone(), overlaps.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        let _outer = shared();
                        let _inner = shared();
                        inside_shared.fetch_add(1, Ordering::SeqCst);
                        if inside_exclusive.load(Ordering::SeqCst) {
                            overlaps.fetch_add(1, Ordering::SeqCst);
                        }
                        std::thread::sleep(Duration::from_micros(50));
                        inside_shared.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for _ in 0..50 {
            let _section = exclusive();
            let _nested = shared();
            inside_exclusive.store(true, Ordering::SeqCst);
            if inside_shared.load(Ordering::SeqCst) != 0 {
                overlaps.fetch_add(1, Ordering::SeqCst);
            }
            std::thread::sleep(Duration::from_micros(100));
            inside_exclusive.store(false, Ordering::SeqCst);
        }
        stop.store(true, Ordering::SeqCst);
        for w in workers {
            w.join().expect("worker thread");
        }
        assert_eq!(overlaps.load(Ordering::SeqCst), 0);
        assert_eq!(DEPTH.get(), 0);
    }
}
