//! The run-queue lifecycle shared by the queue-based policies: as GR3 §4.4
//! puts it, creation, termination, blocking, waking and weight change all
//! reduce to inserting into and removing from the policy's run queue.
//! A policy says how it inserts and removes ([`RunQueue`]);
//! [`run_queue_lifecycle`] writes the five [`Scheduler`] methods once.
//!
//! [`Scheduler`]: crate::sched::Scheduler

use crate::sched::ClientId;

/// How a policy keeps its runnable clients. The `roster` field of the
/// policy has already validated the call and updated the run state.
pub(crate) trait RunQueue {
    /// Refuse the next id before the roster hands it out, when the queue
    /// cannot hold it (a refusal leaves everything unchanged).
    fn check_room(&self, _next: ClientId) -> crate::error::Result<()> {
        Ok(())
    }
    /// Per-client state for the new dense id `id` (before its first insert).
    fn grow(&mut self, _id: ClientId) {}
    /// A runnable client enters the queue: `fresh` on join, false on wake.
    fn enqueue(&mut self, id: ClientId, fresh: bool);
    /// A client leaves the queue (block or leave); `weight` is the weight
    /// it was queued with.
    fn dequeue(&mut self, id: ClientId, weight: u64);
    /// The roster changed `id`'s weight from `old`; `runnable` says whether
    /// it is queued. Policies whose order ignores weights keep the default.
    fn reweigh(&mut self, _id: ClientId, _old: u64, _runnable: bool) {}
}

/// join, leave, set_weight, block and wake of [`Scheduler`] for a policy
/// with a `roster` field and a [`RunQueue`] impl.
///
/// [`Scheduler`]: crate::sched::Scheduler
macro_rules! run_queue_lifecycle {
    () => {
        fn join(&mut self, weight: u64) -> $crate::error::Result<$crate::sched::ClientId> {
            $crate::runqueue::RunQueue::check_room(self, self.roster.weights.len())?;
            let id = self.roster.join(weight)?;
            $crate::runqueue::RunQueue::grow(self, id);
            $crate::runqueue::RunQueue::enqueue(self, id, true);
            Ok(id)
        }
        fn leave(&mut self, id: $crate::sched::ClientId) -> $crate::error::Result<()> {
            if self.roster.leave(id)? {
                let w = self.roster.weights[id];
                $crate::runqueue::RunQueue::dequeue(self, id, w);
            }
            Ok(())
        }
        fn set_weight(
            &mut self,
            id: $crate::sched::ClientId,
            weight: u64,
        ) -> $crate::error::Result<()> {
            let (old, runnable) = self.roster.set_weight(id, weight)?;
            $crate::runqueue::RunQueue::reweigh(self, id, old, runnable);
            Ok(())
        }
        fn block(&mut self, id: $crate::sched::ClientId) -> $crate::error::Result<()> {
            self.roster.block(id)?;
            let w = self.roster.weights[id];
            $crate::runqueue::RunQueue::dequeue(self, id, w);
            Ok(())
        }
        fn wake(&mut self, id: $crate::sched::ClientId) -> $crate::error::Result<()> {
            self.roster.wake(id)?;
            $crate::runqueue::RunQueue::enqueue(self, id, false);
            Ok(())
        }
    };
}
pub(crate) use run_queue_lifecycle;
