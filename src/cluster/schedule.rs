//! The jobs' dataflow, on timely with differential dataflow for the bookkeeping:
//!
//! ```text
//! jobs ─ antijoin(finished keys) ─> pending ─> Dispatch ─> Run ─> Write
//!                                     (worker 0)   (each worker)  (worker 0)
//! ```
//!
//! - *Pending* is a differential collection: the jobs whose key is not among the finished
//!   ones.
//! - *Dispatch* (worker 0) waits for every pending job, then hands them out longest first,
//!   each to the worker with the least work so far (its estimate: the task's last wall time,
//!   else its time cap).
//! - *Run* (every worker) runs its jobs one at a time, each in a child process started from
//!   a thread of its own, which wakes the operator when the child has ended; the worker
//!   thread itself never blocks.
//! - *Write* (worker 0 of process 0) receives every result as it finishes.
//!
//! Timed jobs run in a second pass of the same dataflow, all on worker 0, once every other
//! job has finished, so nothing runs beside them.

use super::job::{Job, Task};
use super::store::Finished;
use super::Cluster;
use crate::error::{Error, Result};
use differential_dataflow::input::Input;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::probe::Handle;
use timely::dataflow::operators::Probe;

/// What the writer hears, in order.
#[derive(Debug)]
pub enum Event<T: Task> {
    /// A pass's pending jobs are known: this many will run, on this many workers.
    Planned {
        pending: usize,
        workers: usize,
    },
    Finished(Finished<T>),
    /// The job could not be run (its child did not start); it is not recorded.
    Failed {
        job: Job<T>,
        error: String,
    },
}

/// A job with its estimated seconds (for dispatch), as the dataflow carries it.
type Planned<T> = (Job<T>, u64);
/// A job's result as it travels to the writer.
type Done<T> = (
    Job<T>,
    std::result::Result<(f64, <T as Task>::Outcome), String>,
    String,
);

/// Runs the `jobs` (each with its estimated seconds) whose key is not in `finished` over
/// `cluster`, calling `on_event` in worker 0 of process 0 as jobs are planned and finish.
pub fn run<T: Task, F>(
    cluster: &Cluster,
    jobs: Vec<(Job<T>, f64)>,
    finished: Vec<String>,
    on_event: F,
) -> Result<()>
where
    F: FnMut(Event<T>) + Send + 'static,
{
    let jobs: Vec<Planned<T>> = jobs
        .into_iter()
        .map(|(j, s)| (j, s.max(0.0).ceil() as u64))
        .collect();
    let shared = Arc::new((jobs, finished, Mutex::new(Some(on_event))));
    let guards = timely::execute(cluster.timely_config()?, move |worker| {
        let (jobs, finished, on_event) = &*shared;
        let index = worker.index();
        let events = match index {
            0 => on_event.lock().expect("not poisoned").take(),
            _ => None,
        }
        .map(|f| Rc::new(RefCell::new(f)));
        for timed in [false, true] {
            let probe = Handle::new();
            let peers = if timed { 1 } else { worker.peers() };
            let events = events.clone();
            let (mut jobs_in, mut finished_in) = worker.dataflow::<u32, _, _>(|scope| {
                let (jobs_in, jobs) = scope.new_collection::<(String, Planned<T>), isize>();
                let (finished_in, finished) = scope.new_collection::<String, isize>();
                let pending = jobs.antijoin(finished.distinct()).consolidate();
                let assigned = dispatch(pending.inner, peers, events.clone());
                let done = run_each(assigned);
                write(done, events).probe_with(&probe);
                (jobs_in, finished_in)
            });
            if index == 0 {
                for (job, secs) in jobs.iter().filter(|(j, _)| j.task.timed() == timed) {
                    jobs_in.insert((job.key.clone(), (job.clone(), *secs)));
                }
                for key in finished {
                    finished_in.insert(key.clone());
                }
            }
            drop((jobs_in, finished_in));
            while !probe.done() {
                worker.step_or_park(None);
            }
        }
    })
    .map_err(|e| Error::bad_input(format!("starting the cluster: {e}")))?;
    for r in guards.join() {
        r.map_err(|e| Error::internal(format!("a worker failed: {e}")))?;
    }
    Ok(())
}

type Stream<'s, D> = timely::dataflow::Stream<'s, u32, Vec<D>>;

/// Worker 0 collects every pending job, then gives each, longest first, to the worker with
/// the least estimated work so far.
fn dispatch<'s, T: Task, F: FnMut(Event<T>) + 'static>(
    pending: Stream<'s, ((String, Planned<T>), u32, isize)>,
    peers: usize,
    events: Option<Rc<RefCell<F>>>,
) -> Stream<'s, (usize, Job<T>)> {
    pending.unary_frontier(Exchange::new(|_| 0), "Dispatch", move |_, _| {
        let mut stash: Vec<Planned<T>> = vec![];
        let mut held = None;
        let mut planned = false;
        move |(input, frontier), output| {
            input.for_each(|cap, data| {
                if held.is_none() {
                    held = cap.retain_least(0);
                }
                for ((_, job), _, diff) in data.drain(..) {
                    if diff > 0 {
                        stash.push(job);
                    }
                }
            });
            if !frontier.is_empty() || planned {
                return;
            }
            planned = true;
            if let Some(events) = &events {
                (events.borrow_mut())(Event::Planned {
                    pending: stash.len(),
                    workers: peers,
                });
            }
            let Some(cap) = held.take() else { return };
            stash.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let mut load = vec![0u64; peers];
            let mut session = output.session(&cap);
            for (job, secs) in stash.drain(..) {
                let w = (0..peers).min_by_key(|w| load[*w]).expect("a worker");
                load[w] += secs.max(1);
                session.give((w, job));
            }
        }
    })
}

/// Each worker runs its jobs one at a time, each child started from a thread that wakes
/// the operator when it ends.
fn run_each<'s, T: Task>(assigned: Stream<'s, (usize, Job<T>)>) -> Stream<'s, Done<T>> {
    let worker = assigned.scope().worker();
    let name = format!("worker {}", worker.index());
    assigned.unary(
        Exchange::new(|(w, _): &(usize, Job<T>)| *w as u64),
        "Run",
        move |_, info| {
            let (tx, rx) = mpsc::channel();
            let mut queue: VecDeque<(Job<T>, timely::dataflow::operators::Capability<u32>)> =
                VecDeque::new();
            let mut running = None;
            let activator = worker.sync_activator_for(info.address.to_vec());
            move |input, output| {
                input.for_each(|cap, data| {
                    let cap = cap.retain_least(0).expect("a time");
                    queue.extend(data.drain(..).map(|(_, job)| (job, cap.clone())));
                });
                if let Ok(result) = rx.try_recv() {
                    let (job, cap): (Job<T>, _) = running.take().expect("a running job");
                    output.session(&cap).give((job, result, name.clone()));
                }
                if running.is_none() {
                    if let Some((job, cap)) = queue.pop_front() {
                        let tx = tx.clone();
                        let wake = activator.clone();
                        let child_job = job.clone();
                        std::thread::spawn(move || {
                            let started = Instant::now();
                            let result = child_job
                                .run()
                                .map(|o| (started.elapsed().as_secs_f64(), o))
                                .map_err(|e| e.to_string());
                            let _ = tx.send(result);
                            let _ = wake.activate();
                        });
                        running = Some((job, cap));
                    }
                }
            }
        },
    )
}

/// Worker 0 hands each result to the writer.
fn write<'s, T: Task, F: FnMut(Event<T>) + 'static>(
    done: Stream<'s, Done<T>>,
    events: Option<Rc<RefCell<F>>>,
) -> Stream<'s, ()> {
    type Nothing = timely::container::CapacityContainerBuilder<Vec<()>>;
    done.unary::<Nothing, _, _, _>(Exchange::new(|_| 0), "Write", move |_, _| {
        move |input, _output| {
            input.for_each(|_, data| {
                for (job, result, worker) in data.drain(..) {
                    let event = match result {
                        Ok((seconds, outcome)) => Event::Finished(Finished {
                            job,
                            outcome,
                            worker,
                            seconds,
                        }),
                        Err(error) => Event::Failed { job, error },
                    };
                    if let Some(events) = &events {
                        (events.borrow_mut())(event);
                    }
                }
            });
        }
    })
}
