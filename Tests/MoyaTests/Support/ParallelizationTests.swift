import MoyaTestHarness
import Testing

@Suite("The test bundle's own settings")
struct ParallelizationTests {
    /// `MoyaTestHarness` sets the width as the bundle loads, unless the caller set one: a run
    /// that starts every test at once queues seconds of work ahead of each request's
    /// continuation on two cores.
    @Test("A run of the tests starts a bounded number of them at once")
    func widthIsBounded() {
        #expect(moya_test_parallelization_width() > 0)
    }
}
