import Foundation
import Testing

@testable import Moya

/// The request's state machine for a streamed response, without a network: the head goes to
/// the callers and the work stays attached while the body is read; the end or the consumer
/// stopping ends it, once.
@Suite("Request state machine, streaming")
struct RequestStateMachineStreamTests {
    typealias Machine = RequestStateMachine<Int>

    /// A machine whose single caller's request was sent, with work 1, and whose head arrived.
    private static func receiving() -> (Machine, Int) {
        var machine = Machine()
        let id = machine.subscribe({ _ in }, callbackQueue: nil)!
        _ = machine.requestBuilt()
        _ = machine.attemptStarting()
        _ = machine.workStarted(1)
        _ = machine.headReceived()
        return (machine, id)
    }

    @Test("streamStarted hands the head to the callers; body parts still count; finished ends the stream")
    func startAndEnd() {
        var (machine, id) = Self.receiving()
        #expect(!machine.hasStreamed)
        guard case .deliver(let callers) = machine.streamStarted() else {
            Issue.record("the head went to nobody")
            return
        }
        #expect(callers.map(\.id) == [id])
        #expect(machine.phase == .streaming)
        #expect(machine.isActive)
        let read = machine.bodyReceived(byteCount: 10)
        #expect(read)
        #expect(machine.bodyBytesReceived == 10)
        guard case .endStream = machine.finished() else {
            Issue.record("the stream's end was not reported as such")
            return
        }
        #expect(machine.phase == .finished)
        // What interceptors read to know the response was the caller's: it stays after the end.
        #expect(machine.hasStreamed)
        guard case .none = machine.finished() else {
            Issue.record("ended twice")
            return
        }
        #expect(machine.streamCancelled() == nil)
    }

    @Test("While streaming, the consumer stopping hands back the work to stop, once")
    func consumerStops() {
        var (machine, _) = Self.receiving()
        _ = machine.streamStarted()
        guard let stopped = machine.streamCancelled() else {
            Issue.record("nothing to stop")
            return
        }
        #expect(stopped.work == 1)
        #expect(stopped.driver == nil)
        #expect(machine.phase == .finished)
        #expect(machine.streamCancelled() == nil)
        guard case .none = machine.finished() else {
            Issue.record("a result after the cancel")
            return
        }
    }

    @Test("A stream is never retried once its head was handed over")
    func noRetry() {
        var (machine, _) = Self.receiving()
        _ = machine.streamStarted()
        let retried = machine.retryDecided()
        #expect(!retried)
        #expect(machine.phase == .streaming)
    }

    @Test("A caller's cancel while streaming does nothing: the callers have the head already")
    func callerCancelWhileStreaming() {
        var (machine, id) = Self.receiving()
        _ = machine.streamStarted()
        guard case .none = machine.cancelled(subscriber: id) else {
            Issue.record("the caller's cancel acted on a stream it no longer holds")
            return
        }
        #expect(machine.phase == .streaming)
    }

    @Test("Before the head, the consumer stopping is not a stream cancel; a cancelled request starts no stream")
    func beforeTheHead() {
        var (machine, id) = Self.receiving()
        #expect(machine.streamCancelled() == nil)
        guard case .stop = machine.cancelled(subscriber: id) else {
            Issue.record("the caller's cancel did not stop the request")
            return
        }
        guard case .none = machine.streamStarted() else {
            Issue.record("a stream started after the cancel")
            return
        }
    }
}
