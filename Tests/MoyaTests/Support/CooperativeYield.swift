/// Lets other tests run every `interval` iterations of a CPU-heavy loop.
///
/// Swift Testing runs tests on the cooperative thread pool, which has one thread per core: two
/// on the CI machine. A synchronous loop that runs for seconds (longer under the sanitizers)
/// holds one of them, and two such loops stop every other test in the process, whose waits then
/// look like timeouts. A test that yields now and then shares the pool instead.
func yieldNow(every interval: Int, _ iteration: Int) async {
    if iteration % interval == interval - 1 {
        await _Concurrency.Task.yield()
    }
}
